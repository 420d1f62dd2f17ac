package dev.servicesandbox;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A JSON reader and writer (RFC 8259) of the JDK alone, so the kit has no dependency (docs/decisions.md#java-json):
 * objects become {@code Map<String, Object>} (document order kept; a repeated key: the last wins), arrays
 * {@code List<Object>}, numbers {@code BigDecimal} (exact: amounts are decimals), plus String, Boolean and null.
 * {@link #parse} accepts exactly RFC 8259's grammar (no comments, no trailing commas, no leading zeros, no raw
 * control characters in strings) and nests at most {@link #MAX_DEPTH} deep; anything else is a
 * {@link JsonException} with the offset. {@link #write} writes those shapes back, any {@code Number}, and records
 * (the generated models and the request records: components in order, null components left out). Use your own
 * library (Jackson, Gson) beside it if you have one.
 */
public final class Json {
  /** How deep arrays and objects may nest in a parsed document (a hostile body cannot exhaust the stack). */
  public static final int MAX_DEPTH = 512;

  private final String s;
  private int i;
  private int depth;

  private Json(String s) {
    this.s = s;
  }

  /**
   * Parses one JSON text (whitespace around it allowed, nothing else).
   *
   * @param text the JSON text
   * @return a Map, List, String, BigDecimal, Boolean or null
   * @throws JsonException when the text is not JSON
   */
  public static Object parse(String text) {
    Json p = new Json(text);
    p.ws();
    Object v = p.value();
    p.ws();
    if (p.i != p.s.length()) throw p.error("unexpected characters after the value");
    return v;
  }

  /**
   * Reads a path of object keys and array indexes, e.g. {@code get(doc, "data", 0, "id")}.
   *
   * @param node a parsed value
   * @param path object keys (String) and array indexes (Integer)
   * @return the value there, or null when absent
   */
  public static Object get(Object node, Object... path) {
    for (Object key : path) {
      if (key instanceof Integer idx && node instanceof List<?> list) {
        node = idx >= 0 && idx < list.size() ? list.get(idx) : null;
      } else if (key instanceof String name && node instanceof Map<?, ?> map) {
        node = map.get(name);
      } else {
        return null;
      }
    }
    return node;
  }

  /**
   * JSON text of a value built from Map (String keys), List (or array), record, String, Number, Boolean and null,
   * e.g. {@code Json.write(Map.of("advanceMs", 1000))}. Maps keep their iteration order.
   *
   * @param value the value
   * @return its JSON text
   * @throws JsonException for a value of another type, or a NaN or infinite number
   */
  public static String write(Object value) {
    StringBuilder b = new StringBuilder();
    write(b, value);
    return b.toString();
  }

  private static void write(StringBuilder b, Object v) {
    if (v == null) {
      b.append("null");
    } else if (v instanceof String text) {
      quote(b, text);
    } else if (v instanceof Boolean || v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) {
      b.append(v);
    } else if (v instanceof BigDecimal d) {
      b.append(d.toString()); // exponent form for very large or small values: still valid JSON
    } else if (v instanceof Number n) {
      double d = n.doubleValue();
      if (Double.isNaN(d) || Double.isInfinite(d)) throw new JsonException("no JSON for " + n, -1);
      b.append(new BigDecimal(n.toString()).stripTrailingZeros().toString());
    } else if (v instanceof Enum<?> e) {
      quote(b, e.name());
    } else if (v instanceof Map<?, ?> m) {
      b.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : m.entrySet()) {
        if (!first) b.append(',');
        first = false;
        quote(b, String.valueOf(e.getKey()));
        b.append(':');
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
      write(b, Arrays.asList(array));
    } else if (v instanceof Record r) {
      write(b, fields(r));
    } else {
      throw new JsonException("no JSON for " + v.getClass().getName(), -1);
    }
  }

  /** A record's components by name, in order, null ones left out (an absent optional field). */
  private static Map<String, Object> fields(Record r) {
    Map<String, Object> fields = new LinkedHashMap<>();
    for (RecordComponent c : r.getClass().getRecordComponents()) {
      Object value;
      try {
        c.getAccessor().setAccessible(true); // a record declared private inside a class is still written
        value = c.getAccessor().invoke(r);
      } catch (IllegalAccessException | InvocationTargetException | RuntimeException e) {
        throw new JsonException("cannot read " + r.getClass().getSimpleName() + "." + c.getName() + ": " + e, -1);
      }
      // a component named after a Java keyword is generated with a trailing _ (scripts/java-models.mjs)
      if (value != null) fields.put(c.getName().endsWith("_") ? c.getName().substring(0, c.getName().length() - 1) : c.getName(), value);
    }
    return fields;
  }

  /**
   * A JSON string literal of {@code v}, for building request bodies by hand.
   *
   * @param v the text
   * @return the quoted, escaped literal
   */
  public static String quote(String v) {
    StringBuilder b = new StringBuilder();
    quote(b, v);
    return b.toString();
  }

  private static void quote(StringBuilder b, String v) {
    b.append('"');
    for (int k = 0; k < v.length(); k++) {
      char c = v.charAt(k);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        case '\b' -> b.append("\\b");
        case '\f' -> b.append("\\f");
        default -> {
          if (c < 0x20 || Character.isSurrogate(c) && !pairedAt(v, k)) b.append(String.format("\\u%04x", (int) c));
          else b.append(c);
        }
      }
    }
    b.append('"');
  }

  /** Whether the surrogate at {@code k} is half of a pair (a lone one is written escaped: the text stays ASCII-safe). */
  private static boolean pairedAt(String v, int k) {
    char c = v.charAt(k);
    if (Character.isHighSurrogate(c)) return k + 1 < v.length() && Character.isLowSurrogate(v.charAt(k + 1));
    return k > 0 && Character.isHighSurrogate(v.charAt(k - 1));
  }

  private Object value() {
    if (i >= s.length()) throw error("unexpected end of text");
    char c = s.charAt(i);
    return switch (c) {
      case '{' -> object();
      case '[' -> array();
      case '"' -> string();
      case 't' -> literal("true", Boolean.TRUE);
      case 'f' -> literal("false", Boolean.FALSE);
      case 'n' -> literal("null", null);
      default -> {
        if (c == '-' || c >= '0' && c <= '9') yield number();
        throw error("unexpected character '" + c + "'");
      }
    };
  }

  private void enter() {
    if (++depth > MAX_DEPTH) throw error("nested deeper than " + MAX_DEPTH);
  }

  private Map<String, Object> object() {
    enter();
    Map<String, Object> m = new LinkedHashMap<>();
    i++;
    ws();
    if (!peek('}')) {
      do {
        ws();
        if (i >= s.length() || s.charAt(i) != '"') throw error("expected a string key");
        String k = string();
        ws();
        expect(':');
        ws();
        m.put(k, value());
        ws();
      } while (peek(','));
      expect('}');
    }
    depth--;
    return m;
  }

  private List<Object> array() {
    enter();
    List<Object> l = new ArrayList<>();
    i++;
    ws();
    if (!peek(']')) {
      do {
        ws();
        l.add(value());
        ws();
      } while (peek(','));
      expect(']');
    }
    depth--;
    return l;
  }

  private String string() {
    expect('"');
    StringBuilder b = new StringBuilder();
    while (true) {
      if (i >= s.length()) throw error("unterminated string");
      char c = s.charAt(i++);
      if (c == '"') return b.toString();
      if (c < 0x20) throw error("raw control character U+" + String.format("%04X", (int) c) + " in a string (escape it)");
      if (c != '\\') {
        b.append(c);
        continue;
      }
      if (i >= s.length()) throw error("unterminated escape");
      char e = s.charAt(i++);
      switch (e) {
        case '"' -> b.append('"');
        case '\\' -> b.append('\\');
        case '/' -> b.append('/');
        case 'b' -> b.append('\b');
        case 'f' -> b.append('\f');
        case 'n' -> b.append('\n');
        case 'r' -> b.append('\r');
        case 't' -> b.append('\t');
        // a surrogate pair is two \\u escapes: appended one after the other, they form the one code point
        case 'u' -> b.append(hex4());
        default -> throw error("unknown escape \\" + e);
      }
    }
  }

  private char hex4() {
    if (i + 4 > s.length()) throw error("\\u needs four hex digits");
    int v = 0;
    for (int k = 0; k < 4; k++) {
      int d = Character.digit(s.charAt(i + k), 16);
      if (d < 0) throw error("\\u needs four hex digits");
      v = v * 16 + d;
    }
    i += 4;
    return (char) v;
  }

  /** RFC 8259 section 6: {@code -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?}. */
  private BigDecimal number() {
    int start = i;
    peek('-');
    if (peek('0')) {
      if (i < s.length() && isDigit(s.charAt(i))) throw error("leading zero in a number");
    } else if (!digits()) {
      throw error("a number needs digits");
    }
    if (peek('.') && !digits()) throw error("a fraction needs digits");
    if (i < s.length() && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
      i++;
      if (!peek('+')) peek('-');
      if (!digits()) throw error("an exponent needs digits");
    }
    try {
      return new BigDecimal(s.substring(start, i));
    } catch (NumberFormatException | ArithmeticException e) {
      throw error("number out of range"); // an exponent beyond BigDecimal's scale
    }
  }

  private boolean digits() {
    int start = i;
    while (i < s.length() && isDigit(s.charAt(i))) i++;
    return i > start;
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  private Object literal(String word, Object v) {
    if (!s.startsWith(word, i)) throw error("unexpected character '" + s.charAt(i) + "'");
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
    if (!peek(c)) throw error(i < s.length() ? "expected '" + c + "', found '" + s.charAt(i) + "'" : "expected '" + c + "' at the end");
  }

  /** RFC 8259's whitespace only: space, tab, line feed, carriage return. */
  private void ws() {
    while (i < s.length()) {
      char c = s.charAt(i);
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
      i++;
    }
  }

  private JsonException error(String what) {
    return new JsonException(what, i);
  }
}
