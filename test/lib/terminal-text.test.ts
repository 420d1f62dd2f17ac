import t from 'tap';
import { terminalText } from '../../src/lib/terminal-text.js';

// docs/cli.md#what-run-prints: control characters from files and servers are printed escaped; line breaks and tabs stay.
t.test('every control character but line feed and tab is escaped; other text is left as it is', async (t) => {
  t.equal(terminalText('clear\u001b[2J\u001b]0;owned\u0007 here\u009b1m'), 'clear\\u001b[2J\\u001b]0;owned\\u0007 here\\u009b1m');
  t.equal(terminalText('a\r\nb\tc\n'), 'a\\u000d\nb\tc\n', 'a carriage return could overwrite the line: escaped');
  t.equal(terminalText('\u0000\u007f\u0080\u009f'), '\\u0000\\u007f\\u0080\\u009f', 'NUL, DEL and the C1 range');
  t.equal(terminalText('Café ✓ 😀 \u00a0'), 'Café ✓ 😀 \u00a0', 'printable text, non-ASCII included, unchanged');
  for (let code = 0; code < 0xa0; code += 1) {
    const char = String.fromCharCode(code);
    const control = code < 0x20 || code >= 0x7f;
    const kept = !control || char === '\n' || char === '\t';
    t.equal(terminalText(char) === char, kept, `U+${code.toString(16).padStart(4, '0')} ${kept ? 'kept' : 'escaped'}`);
  }
});
