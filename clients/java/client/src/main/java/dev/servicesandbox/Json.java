package dev.servicesandbox;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small JSON reader and writer, so that the kit needs nothing but the JDK (docs/clients.md#java): objects
 * become {@code Map<String, Object>} (in document order), arrays {@code List<Object>}, numbers {@code BigDecimal}
 * (amounts in the API are decimal strings anyway), plus String, Boolean and null. {@link #write} turns the same
 * shapes (and any {@code Number}) back into JSON text. The generated records ({@code dev.servicesandbox.model})
 * read what {@link #parse} gives. Use your own library (Jackson, Gson) beside it if you have one.
 */
public final class Json {
  private final String s;
  private int i;

  private Json(String s) {
    this.s = s;
  }

  public static Object parse(String text) {
    Json p = new Json(text);
    p.ws();
    Object v = p.value();
    p.ws();
    if (p.i != p.s.length()) throw p.error("trailing characters");
    return v;
  }

  /** Reads a path of object keys and array indexes, e.g. {@code get(doc, "data", 0, "id")}; null when absent. */
  public static Object get(Object node, Object... path) {
    for (Object key : path) {
      if (key instanceof Integer idx && node instanceof List<?> list) {
        node = idx < list.size() ? list.get(idx) : null;
      } else if (key instanceof String name && node instanceof Map<?, ?> map) {
        node = map.get(name);
      } else {
        return null;
      }
    }
    return node;
  }

  /**
   * JSON text of a value built from Map (String keys), List (or array), String, Number, Boolean and null, e.g.
   * {@code Json.write(Map.of("advanceMs", 1000))}. Maps keep their iteration order (use a LinkedHashMap for a set one).
   */
  public static String write(Object value) {
    StringBuilder b = new StringBuilder();
    write(b, value);
    return b.toString();
  }

  private static void write(StringBuilder b, Object v) {
    if (v == null) {
      b.append("null");
    } else if (v instanceof String s) {
      b.append(quote(s));
    } else if (v instanceof Boolean || v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) {
      b.append(v);
    } else if (v instanceof BigDecimal d) {
      b.append(d.toPlainString());
    } else if (v instanceof Number n) {
      double d = n.doubleValue();
      if (Double.isNaN(d) || Double.isInfinite(d)) throw new IllegalArgumentException("no JSON for " + n);
      b.append(new BigDecimal(n.toString()).stripTrailingZeros().toPlainString());
    } else if (v instanceof Map<?, ?> m) {
      b.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : m.entrySet()) {
        if (!first) b.append(',');
        first = false;
        b.append(quote(String.valueOf(e.getKey()))).append(':');
        write(b, e.getValue());
      }
      b.append('}');
    } else if (v instanceof Iterable<?> list) {
      b.append('[');
      boolean first = true;
      for (Object item : list) {
        if (!first) b.append(',');
        first = false;
        write(b, item);
      }
      b.append(']');
    } else if (v instanceof Object[] array) {
      write(b, java.util.Arrays.asList(array));
    } else {
      throw new IllegalArgumentException("no JSON for " + v.getClass().getName());
    }
  }

  /** A JSON string literal, for building request bodies. */
  public static String quote(String v) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : v.toCharArray()) {
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
          else b.append(c);
        }
      }
    }
    return b.append('"').toString();
  }

  private Object value() {
    if (i >= s.length()) throw error("unexpected end");
    char c = s.charAt(i);
    switch (c) {
      case '{':
        return object();
      case '[':
        return array();
      case '"':
        return string();
      case 't':
        return literal("true", Boolean.TRUE);
      case 'f':
        return literal("false", Boolean.FALSE);
      case 'n':
        return literal("null", null);
      default:
        return number();
    }
  }

  private Map<String, Object> object() {
    Map<String, Object> m = new LinkedHashMap<>();
    i++;
    ws();
    if (peek('}')) return m;
    while (true) {
      ws();
      String k = string();
      ws();
      expect(':');
      ws();
      m.put(k, value());
      ws();
      if (peek('}')) return m;
      expect(',');
    }
  }

  private List<Object> array() {
    List<Object> l = new ArrayList<>();
    i++;
    ws();
    if (peek(']')) return l;
    while (true) {
      ws();
      l.add(value());
      ws();
      if (peek(']')) return l;
      expect(',');
    }
  }

  private String string() {
    expect('"');
    StringBuilder b = new StringBuilder();
    while (true) {
      if (i >= s.length()) throw error("unterminated string");
      char c = s.charAt(i++);
      if (c == '"') return b.toString();
      if (c != '\\') {
        b.append(c);
        continue;
      }
      char e = s.charAt(i++);
      switch (e) {
        case 'b' -> b.append('\b');
        case 'f' -> b.append('\f');
        case 'n' -> b.append('\n');
        case 'r' -> b.append('\r');
        case 't' -> b.append('\t');
        case 'u' -> {
          b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
          i += 4;
        }
        default -> b.append(e); // \" \\ \/
      }
    }
  }

  private BigDecimal number() {
    int start = i;
    while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
    if (start == i) throw error("unexpected character");
    return new BigDecimal(s.substring(start, i));
  }

  private Object literal(String word, Object v) {
    if (!s.startsWith(word, i)) throw error("unexpected character");
    i += word.length();
    return v;
  }

  private boolean peek(char c) {
    if (i < s.length() && s.charAt(i) == c) {
      i++;
      return true;
    }
    return false;
  }

  private void expect(char c) {
    if (!peek(c)) throw error("expected '" + c + "'");
  }

  private void ws() {
    while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++;
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException("Bad JSON at " + i + ": " + what);
  }
}
