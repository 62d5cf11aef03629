/**
 * Document ids at the edges of the spec's prefix + number split (NUMBERED: 1–15 digits without a
 * leading zero; `.` matches no line terminator): what the hand-written split and the fence's bytes
 * are checked against the regex on.
 */
export const NUMBERED_EDGE_IDS: readonly string[] = [
  '007',
  '0',
  '10',
  'a0',
  'a00012',
  'x1234567890123456789',
  'y999999999999999',
  'y1000000000000000',
  'line\n7',
  'cr\r8',
  'ls\u20289',
  'tab\t5',
  'é/12',
  '日本/3',
  '',
  '9',
  '~12',
  'gid://a/0',
  'plain',
  'gid://shopify/Product/7086727600002',
  'gid://shopify/Product/7086727600001',
  '\u{1F600}42',
];

/**
 * Ids that stress how lists store them (docs/archive-format.md, "Document lists"): the split's edges
 * plus text that reads as an integer or a number, the `~` escape itself, integers past 2^53, and an
 * integer followed by a line terminator (which Trino's `$` matches before).
 */
export const STORED_FORM_IDS: readonly string[] = [
  ...NUMBERED_EDGE_IDS,
  ' 12',
  '12 ',
  '1e3',
  '-1',
  '-0',
  '~',
  '~~',
  '~5',
  '~-3',
  '12345678901234567890',
  '9007199254740993',
  '9007199254740992',
  '7\n',
  '-3\n',
];
