package dev.servicesandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A session from a scenario (docs/sessions.md#scenarios): what the kit sends in POST /_emulator/sessions. */
class SessionOptionsTest {
  @Test
  void a_scenario_by_name_goes_in_the_body_without_the_default_clock() {
    Map<?, ?> body = (Map<?, ?>) Json.parse(SessionOptions.defaults().scenario("demo").toJson());
    assertEquals("demo", body.get("scenario"));
    assertFalse(body.containsKey("clock"), "the scenario's clock applies, not the kit's default");
    Map<?, ?> chosen = (Map<?, ?>) Json.parse(SessionOptions.defaults().clock("realtime").scenario("demo").toJson());
    assertEquals("realtime", chosen.get("clock"), "a clock the test chose is kept");
  }

  @Test
  void a_scenario_file_is_read_and_sent_as_text_and_an_object_as_json(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("story.yaml");
    Files.writeString(file, "name: story\nsteps:\n  - advance: 1s\n");
    Map<?, ?> body = (Map<?, ?>) Json.parse(SessionOptions.defaults().scenarioFile(file).toJson());
    assertEquals("name: story\nsteps:\n  - advance: 1s\n", body.get("scenario"));
    Map<?, ?> inline = (Map<?, ?>) Json.parse(SessionOptions.defaults().scenario(Map.of("name", "inline")).toJson());
    assertTrue(inline.get("scenario") instanceof Map<?, ?> scenario && "inline".equals(scenario.get("name")));
  }
}
