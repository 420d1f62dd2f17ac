// Text a command prints that came from a file or a server (a scenario's captions and expectations, an answer's body):
// control characters are shown escaped, so a hostile file cannot move the cursor, clear the screen, retitle the window
// or hide a failure behind an escape sequence (docs/cli.md#what-run-prints). Line breaks and tabs stay.

// C0 controls but tab and line feed, DEL, and the C1 controls (U+0080-U+009F: 8-bit CSI and friends)
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** `text` with every control character but `\n` and `\t` written as `\u001b`-style escapes. */
export function terminalText(text: string): string {
  return text.replace(CONTROL, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
