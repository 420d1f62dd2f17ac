package dev.servicesandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The kit's JSON reader and writer against RFC 8259 (docs/decisions.md#java-json). */
class JsonTest {
  @Test
  void numbers_follow_the_grammar_and_stay_exact() {
    assertEquals(new BigDecimal("0"), Json.parse("0"));
    assertEquals(new BigDecimal("-0.5"), Json.parse("-0.5"));
    assertEquals(new BigDecimal("1.10"), Json.parse("1.10"), "scale kept: amounts are exact");
    assertEquals(new BigDecimal("1E+3"), Json.parse("1e3"));
    assertEquals(new BigDecimal("2.5E-2"), Json.parse("2.5E-2"));
    assertEquals(new BigDecimal("12345678901234567890.123"), Json.parse("12345678901234567890.123"));
    for (String bad : List.of("01", "-", "1.", ".5", "+1", "1e", "1e+", "0x10", "NaN", "Infinity", "-01", "1.5.2", "1e5e5")) {
      assertThrows(JsonException.class, () -> Json.parse(bad), bad);
    }
    assertThrows(JsonException.class, () -> Json.parse("1e9999999999"), "an exponent beyond range is an error, not a crash");
  }

  @Test
  void strings_decode_every_escape_and_surrogate_pairs() {
    assertEquals("\" \\ / \b \f \n \r \t", Json.parse("\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\""));
    assertEquals("é", Json.parse("\"\\u00e9\""));
    assertEquals("😀", Json.parse("\"\\ud83d\\ude00\""), "a surrogate pair is one code point");
    assertEquals(0x1F600, ((String) Json.parse("\"\\uD83D\\uDE00\"")).codePointAt(0));
    assertEquals("日本", Json.parse("\"日本\""), "raw UTF-8 text as it is");
    for (String bad : List.of("\"a", "\"\\x\"", "\"\\u12\"", "\"\\u12g4\"", "\"tab\there\"", "\"line\nbreak\"", "\"\\")) {
      assertThrows(JsonException.class, () -> Json.parse(bad), bad);
    }
  }

  @Test
  void structure_whitespace_and_literals() {
    Object doc = Json.parse(" \t\r\n{\"a\" : [1, {\"b\": null}, true, false], \"c\": {}, \"d\": []}\n");
    assertEquals(new BigDecimal("1"), Json.get(doc, "a", 0));
    assertNull(Json.get(doc, "a", 1, "b"));
    assertEquals(Boolean.TRUE, Json.get(doc, "a", 2));
    assertEquals(Map.of(), Json.get(doc, "c"));
    assertEquals(List.of(), Json.get(doc, "d"));
    assertNull(Json.get(doc, "a", 9), "an index past the end");
    assertNull(Json.get(doc, "a", -1), "a negative index");
    assertEquals(List.of("a", "c", "d"), List.copyOf(((Map<?, ?>) doc).keySet()), "document order kept");
    assertEquals(new BigDecimal("2"), Json.get(Json.parse("{\"k\":1,\"k\":2}"), "k"), "a repeated key: the last wins");
    for (String bad : List.of("", "   ", "[1,]", "{\"a\":1,}", "[1 2]", "{a:1}", "{\"a\" 1}", "tru", "nul", "[", "{", "]",
        "[1]x", "\u00a0[]", "// c\n1", "'a'", "{\"a\":1 \"b\":2}")) {
      assertThrows(JsonException.class, () -> Json.parse(bad), bad);
    }
  }

  @Test
  void nesting_is_limited() {
    String ok = "[".repeat(Json.MAX_DEPTH) + "]".repeat(Json.MAX_DEPTH);
    assertTrue(Json.parse(ok) instanceof List<?>);
    String deep = "[".repeat(Json.MAX_DEPTH + 1) + "]".repeat(Json.MAX_DEPTH + 1);
    JsonException e = assertThrows(JsonException.class, () -> Json.parse(deep));
    assertTrue(e.getMessage().contains("nested deeper"), e.getMessage());
    String hostile = "{\"a\":".repeat(100_000);
    assertThrows(JsonException.class, () -> Json.parse(hostile), "a hostile body: an error, never a StackOverflowError");
  }

  @Test
  void writing_round_trips_and_escapes() {
    Map<String, Object> value = new LinkedHashMap<>();
    value.put("s", "q\"b\\n\n\u0001😀");
    value.put("n", new BigDecimal("10.50"));
    value.put("i", 3);
    value.put("d", 0.25);
    value.put("l", Arrays.asList(null, true, "x"));
    String text = Json.write(value);
    assertEquals("{\"s\":\"q\\\"b\\\\n\\n\\u0001😀\",\"n\":10.50,\"i\":3,\"d\":0.25,\"l\":[null,true,\"x\"]}", text);
    assertEquals(value.get("s"), Json.get(Json.parse(text), "s"));
    assertEquals("\"\\ud83d\"", Json.write("\ud83d"), "a lone surrogate is escaped");
    assertThrows(JsonException.class, () -> Json.write(Double.NaN));
    assertThrows(JsonException.class, () -> Json.write(new Object()));
  }

  record Body(String name, Long count, String absent, List<String> tags, Map<String, Object> extra) {}

  @Test
  void records_are_written_as_objects_without_their_null_components() {
    assertEquals("{\"name\":\"n\",\"count\":2,\"tags\":[\"a\"],\"extra\":{}}", Json.write(new Body("n", 2L, null, List.of("a"), Map.of())));
    assertEquals("{\"match\":{\"method\":\"POST\",\"path\":\"/v1/x\"},\"effect\":{\"type\":\"ambiguous\",\"status\":502},\"times\":1}",
        Json.write(Fault.on("POST", "/v1/x").ambiguous(502).times(1)));
    assertEquals("?transactionId=txn_1&sortDirection=ASC&pageIndex=0&pageSize=100",
        DeliveryQuery.all().transactionId("txn_1").ascending(true).page(0, 100).toQueryString());
    assertEquals("?status=a%26b", DeliveryQuery.all().status("a&b").toQueryString(), "values URL-encoded");
    assertEquals("", DeliveryQuery.all().toQueryString());
  }
}
