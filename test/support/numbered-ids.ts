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
