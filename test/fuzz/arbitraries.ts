import fc from 'fast-check';

/**
 * Generators of hostile requests for the route fuzzer. A generated request is symbolic (`'valid'`
 * stands for the fuzzing user's current session) and becomes inject options in routes.fuzz.test.ts,
 * so a re-login between runs does not invalidate what fast-check generated or shrinks.
 */

/** Values the generators draw from: real ids of the fuzzing user's rows and of the victims' rows. */
export interface FuzzWorld {
  /** Ids of rows of every kind (jobs, trainings, clients, chats, ...) owned by the fuzzing user. */
  ownIds: number[];
  /** Ids of rows owned by the victims: a handler that forgets its scope would touch them. */
  otherIds: number[];
  /** User ids: the fuzzing user's own first, then the victims'. */
  userIds: number[];
  /** E-mail addresses of existing users (not secret: anyone may try them at login). */
  emails: string[];
}

/** Text the fuzzer must never send, so finding it in a reply means a real leak, not an echo. */
export const LEAK_PATTERN = /node_modules|\.(?:ts|js|mjs|cjs):\d|\bat\s+\S*\s*\(?(?:file:\/\/)?\/\S+:\d+|scrypt\$/;

const SQL_INJECTION = [
  "' OR '1'='1",
  "' OR 1=1 --",
  '1 OR 1=1',
  '1; DROP TABLE users; --',
  "1'; DELETE FROM jobs WHERE '1'='1",
  "'); DROP TABLE sessions; --",
  '1 UNION SELECT password_hash FROM users',
  "' UNION SELECT token_hash, null FROM sessions --",
  '0x7f',
  "\\'; SELECT pg_sleep(5); --",
  '$$; drop table users; $$',
  "Id = 1 OR 1=1",
  'Id = 1) OR (1=1',
  "CompanyProviderKey LIKE 'sk%'",
  'provider_key_enc IS NOT NULL',
  'user_id > 0',
  'password_hash IS NOT NULL',
  "Id IN (SELECT id FROM users)",
  '((((((((((((((((((((((((((((((((',
  'Id = 1 AND (Id = 2 OR (Id = 3 OR (Id = 4)))',
  'Id, (select 1)',
  '*, password_hash',
  "Description LIKE '%' ESCAPE '\\'",
];

const PATH_TRAVERSAL = [
  '../../../../etc/passwd',
  '..\\..\\..\\windows\\win.ini',
  '/etc/shadow',
  '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
  '....//....//etc/passwd',
  'file:///etc/passwd',
  '/proc/self/environ',
  'data_rows_1',
  'C:\\boot.ini',
  '\\\\server\\share',
];

const UNICODE = [
  '\u202Eevil\u202C',
  'مرحبا بالعالم',
  'שלום',
  '😀👍🏽👨‍👩‍👧‍👦',
  'a\u0000b',
  '\u0000',
  '\uD800',
  'x\uDC00y',
  '\uDBFF\uDFFF',
  '\uFEFF',
  '\u200B\u200D',
  'Ω≈ç√∫',
  '\u0301\u0301\u0301',
  'ｆｕｌｌｗｉｄｔｈ',
  '\r\nSet-Cookie: x=1',
  '\t\v\f',
  '<script>alert(1)</script>',
  '{{7*7}}${7*7}',
  '%s%s%n%x',
  '=cmd|"/c calc"!A1',
];

const NUMERIC_EDGES = ['-1', '0', '-0', '1.5', '1e309', '-1e309', 'NaN', 'Infinity', '0x10', '2147483648', '-2147483649', '99999999999999999999', '1,2,3', '1;2', ' 1 ', '+1', '.5', '1e2', '00000001'];

const WORD_EDGES = ['true', 'false', 'null', 'undefined', '[]', '{}', '[object Object]', '__proto__', 'constructor', 'prototype', 'toString', ' ', '\n'];

const TIME_ZONES = ['Europe/Madrid', 'UTC', 'America/New_York', 'Asia/Kolkata', 'Etc/GMT+12', 'Pacific/Kiritimati', 'Europe/Nowhere', '+02:00', 'utc', 'local'];

const DATES = ['2021-01-01', '2021-01-01 00:00:00', '1970-01-01 00:00:00', '9999-12-31 23:59:59', '0000-00-00 00:00:00', '2021-13-45 25:61:61', '2021-02-30', '2021-1-1', 'yesterday'];

/** Any string the generators produce, minus the rare one that looks like a leak itself. */
const safe = (arb: fc.Arbitrary<string>) => arb.filter((s) => !LEAK_PATTERN.test(s));

/** About 100 KB of one repeated random chunk. */
const huge = fc
  .string({ minLength: 1, maxLength: 6, unit: 'binary' })
  .map((chunk) => chunk.repeat(Math.ceil(100_000 / chunk.length)))
  .filter((s) => !LEAK_PATTERN.test(s.slice(0, 200)));

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...SQL_INJECTION), weight: 4 },
  { arbitrary: fc.constantFrom(...PATH_TRAVERSAL), weight: 2 },
  { arbitrary: fc.constantFrom(...UNICODE), weight: 3 },
  { arbitrary: fc.constantFrom(...NUMERIC_EDGES, ...WORD_EDGES), weight: 3 },
  { arbitrary: safe(fc.string({ maxLength: 40 })), weight: 2 },
  { arbitrary: safe(fc.string({ maxLength: 40, unit: 'binary' })), weight: 2 },
  { arbitrary: fc.tuple(fc.constantFrom(...SQL_INJECTION, ...UNICODE), fc.constantFrom(...UNICODE, ...PATH_TRAVERSAL)).map(([a, b]) => a + b), weight: 1 },
  { arbitrary: huge, weight: 1 },
);

/** Nested JSON: objects in arrays in objects, with prototype-looking keys. */
export const nestedJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.constant(JSON.parse('{"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}}}')),
  fc.constant([[[[[[[[[[1]]]]]]]]]]),
  fc.constant({ a: { b: { c: { d: [1, { e: 'x' }] } } } }),
);

/** A value of a different type than the parameter expects (over JSON, where types survive). */
const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(2 ** 31, -(2 ** 31) - 1, Number.MAX_SAFE_INTEGER, 1e308, -0),
  fc.array(fc.oneof(fc.integer(), safe(fc.string({ maxLength: 10 }))), { maxLength: 4 }),
  nestedJson,
);

const idValue = (world: FuzzWorld) =>
  fc.oneof(
    { arbitrary: fc.constantFrom(...world.ownIds), weight: 4 },
    { arbitrary: fc.constantFrom(...world.otherIds), weight: 4 },
    { arbitrary: fc.constantFrom(...world.userIds), weight: 2 },
    { arbitrary: fc.constantFrom(0, -1, 2_147_483_647, 2_147_483_648), weight: 1 },
  );

const filterText = (world: FuzzWorld) =>
  fc.oneof(
    fc.constantFrom('*', 'Id', 'Id,CompanyName', 'Id, Description', 'job_id, LearningRate', ''),
    fc.constantFrom(...world.otherIds, ...world.ownIds).map((id) => `Id = ${id}`),
    fc.constantFrom(...world.otherIds).map((id) => `Id = ${id} OR Id > 0`),
    fc.constantFrom(...SQL_INJECTION),
    fc.nat({ max: 5000 }).map((n) => `${'('.repeat(n)}Id = 1${')'.repeat(n)}`),
    fc.nat({ max: 300 }).map((n) => Array.from({ length: n }, (_, i) => `Id = ${i}`).join(' OR ')),
  );

const WORDS = fc.constantFrom('fuzz', 'Hello there', 'Descripción ñ', 'x');
const SMALL = fc.constantFrom(0, 1, 2, '0', '1', '2');

/** Plausible values by parameter name, so handlers get past their first check; other names get SMALL or WORDS. */
const BY_NAME: Record<string, (world: FuzzWorld) => fc.Arbitrary<unknown>> = {
  tz: () => fc.constantFrom(...TIME_ZONES.slice(0, 6)),
  email: (world) => fc.oneof(fc.constantFrom(...world.emails), fc.constantFrom('fuzz-new@example.com', 'not-an-email')),
  password: () => fc.constantFrom('Fuzz-Passw0rd!x', 'short'),
  new_password: () => fc.constant('Fuzz-Passw0rd!y'),
  new_password_repeat: () => fc.constant('Fuzz-Passw0rd!y'),
  phonenumber: () => fc.constant('600000000'),
  phone: () => fc.constant('600000000'),
  role: () => fc.constantFrom('admin', 'consumer', 0, 1, 2),
  status: () => fc.constantFrom('subscribed', 'unsubscribed', 0, 1, 2, 3, 5, '1,2'),
  status_filter: () => fc.constantFrom('0', '1,2', '0,1,2,3,4,5', '9'),
  direction: () => fc.constantFrom('Up', 'Down'),
  control: () => fc.constantFrom('auto', 'manual'),
  app: () => fc.constantFrom('forecast', 'forecast', 'nope'),
  app_name: () => fc.constantFrom('forecast', 'forecast', 'nope'),
  app_id: () => fc.constantFrom('forecast', 'forecast', 'nope'),
  params: () => fc.constantFrom('plan=premium', 'plan=basic', 'LayersRequested,LearningRate', '2,0.1', 'plan=nope'),
  probability: () => fc.constantFrom(0, 0.5, 1, '0.25'),
  max_tokens: () => fc.constantFrom(1, 16),
  prompt: () => fc.constantFrom('Hello', '[{"role":"user","content":"hi"}]', '[{"role":"system"}]', '[]'),
  provider_key: () => fc.constantFrom('sk-fuzz-0123456789abcdef0123456789', 'short'),
  data: () =>
    fc.oneof(
      nestedJson.map((v) => JSON.stringify(v)),
      fc.constantFrom('{"CompanyName":"Fuzz SL"}', '{"Description":"fuzz","Temperature":0.5}', '{"Description":"a\\u0000b"}', '{"Description":'),
    ),
  limit: () => fc.constantFrom(0, 1, 10),
  pid: () => fc.constantFrom(1, 7, 12345),
  PID: () => fc.constantFrom(1, 7, 12345),
  host: () => fc.constantFrom('seed-host', 'fuzz-host'),
  name: () => fc.constantFrom('seed', 'fuzz', 'Fuzz Name'),
  advance: () => fc.constantFrom(0, 50, 100, 101),
  period: () => fc.constantFrom(1, 7, 30),
  estimate: () => fc.constantFrom('', 'sales'),
  alter: () => fc.constantFrom(0, 1.5),
  until: () => fc.constantFrom(...DATES),
  sort: () => fc.constantFrom('asc', 'desc', 'Id', 'date'),
};

function plausible(name: string, world: FuzzWorld): fc.Arbitrary<unknown> {
  // Parameter names such as `constructor` must not reach Object.prototype.
  if (Object.hasOwn(BY_NAME, name)) return BY_NAME[name]!(world);
  const n = name.toLowerCase();
  if (n === 'fields' || n === 'where' || n === 'filters') return filterText(world);
  if (n.includes('date')) return fc.constantFrom(...DATES);
  if (n === 'id' || n === 'user' || n.endsWith('_id')) return idValue(world);
  if (['text', 'message', 'description', 'lastname', 'search', 'new_text', 'hash', 'query', 'procedure', 'caller', 'token', 'current_password'].includes(n)) return WORDS;
  return SMALL;
}

export const paramValue = (name: string, world: FuzzWorld): fc.Arbitrary<unknown> =>
  fc.oneof(
    { arbitrary: plausible(name, world), weight: 6 },
    { arbitrary: hostileString, weight: 4 },
    { arbitrary: wrongType, weight: 2 },
  );

/** How the parameters travel. */
export type Encoding =
  | 'query'
  | 'form'
  | 'json'
  | 'json-duplicate-keys'
  | 'multipart'
  | 'multipart-cut'
  | 'text/plain'
  | 'application/xml'
  | 'application/octet-stream'
  | 'malformed-json'
  | 'odd-content-type'
  | 'no-body';

/** Where the session goes, and which: the fuzzing user's valid one, none, or garbage. */
export interface SessionSpec {
  where: 'param' | 'query' | 'cookie' | 'bearer' | 'none' | 'twice';
  token: 'valid' | { garbage: string };
}

export interface FuzzFile {
  field: string;
  filename: string;
  content: string;
}

export interface FuzzRequest {
  /** Ordered; a name may repeat (duplicated parameters). */
  params: [string, unknown][];
  session: SessionSpec;
  encoding: Encoding;
  files: FuzzFile[];
  /** multipart-cut: where to cut (fraction of the body) and what content-length to announce. */
  cut: { at: number; contentLength: 'cut' | 'full' | 'absent' };
  /** A seed for byte-level garbage bodies. */
  garbage: Uint8Array;
  /** `text/event-stream` asks /aichat.php to stream. */
  accept: string | undefined;
}

const garbageToken = fc.oneof(
  safe(fc.string({ maxLength: 64 })),
  fc.constantFrom(...SQL_INJECTION, ...UNICODE, 'null', 'undefined', '0', 'Bearer', ''),
  fc.constant('x'.repeat(100_000)),
  fc.base64String({ minLength: 43, maxLength: 44 }),
);

export const sessionSpec: fc.Arbitrary<SessionSpec> = fc.oneof(
  { arbitrary: fc.record({ where: fc.constantFrom('param', 'query', 'cookie', 'bearer', 'twice'), token: fc.constant('valid' as const) }), weight: 7 },
  { arbitrary: fc.constant<SessionSpec>({ where: 'none', token: 'valid' }), weight: 1 },
  {
    arbitrary: fc.record({
      where: fc.constantFrom('param', 'query', 'cookie', 'bearer'),
      token: garbageToken.map((garbage) => ({ garbage })),
    }),
    weight: 2,
  },
);

const csvContent = fc.oneof(
  { arbitrary: fc.constant('year,month,day,sales\n2021,1,1,10\n2021,1,2,20\n2021,1,3,\n'), weight: 4 },
  fc.constant('a,b\n"unterminated,1\n'),
  fc.constant('\uFEFFdate;value\n2021-01-01;1\n'),
  fc.constant(',,,\n,,,\n'),
  fc.constant(''),
  fc.constant('=cmd|"/c calc"!A1,b\n1,2\n'),
  fc.constant(`${'c,'.repeat(3000)}c\n`),
  fc.constant('a\u0000b,c\n1,2\n'),
  fc.tuple(hostileString, hostileString).map(([h, v]) => `${h.slice(0, 2000)},x\n${v.slice(0, 2000)},1\n`),
);

const fileArb = fc.record({
  field: fc.oneof({ arbitrary: fc.constant('Servicefile'), weight: 3 }, fc.constantFrom('servicefile', 'Servicefile1', 'Servicefile[]', 'file', 'session')),
  filename: fc.oneof({ arbitrary: fc.constant('data.csv'), weight: 3 }, fc.constantFrom('../../etc/passwd', 'a\u202Ecsv.exe', '', 'x'.repeat(300))),
  content: csvContent,
});

/** The route as the fuzzer sees it: its documented parameters, and whether it reads a file upload. */
export interface RouteShape {
  method: string;
  params: string[];
  upload: boolean;
}

/**
 * A request to one route. A third of the runs keep every parameter plausible and a third spoil exactly
 * one, so handlers are reached past their first check; the rest spoil each parameter independently.
 */
export function fuzzRequest(route: RouteShape, world: FuzzWorld): fc.Arbitrary<FuzzRequest> {
  const names = [...new Set(route.params)];
  const extraName = fc.oneof(
    fc.constantFrom('__proto__', 'constructor', 'a[]', 'session[]', 'tz[]', 'job_id[]', 'user_id', 'role', 'is_enabled', 'password_hash', 'x'),
    safe(fc.string({ minLength: 1, maxLength: 10 })),
  );
  const entry = (name: string, mode: 'plausible' | 'any') =>
    (mode === 'plausible' ? plausible(name, world) : paramValue(name, world)).map((value): [string, unknown] => [name, value]);
  const chosen = names.length > 0 ? fc.subarray(names) : fc.constant<string[]>([]);
  const hostileParams = fc
    .tuple(
      // Most runs carry most parameters (so handlers get deep); some drop several (missing parameters).
      fc.oneof({ arbitrary: fc.constant(names), weight: 2 }, { arbitrary: chosen, weight: 1 }),
      fc.array(extraName, { maxLength: 2 }),
      fc.array(fc.constantFrom(...(names.length > 0 ? names : ['x'])), { maxLength: 2 }),
    )
    .chain(([picked, extra, duplicated]) => fc.tuple(...[...picked, ...extra, ...duplicated].map((name) => entry(name, 'any'))));
  const plausibleParams = fc.tuple(...names.map((name) => entry(name, 'plausible')));
  const oneSpoiled =
    names.length === 0
      ? plausibleParams
      : fc
          .tuple(plausibleParams, fc.nat({ max: names.length - 1 }), fc.oneof(hostileString, wrongType))
          .map(([params, index, bad]) => params.map(([name, value], i): [string, unknown] => [name, i === index ? bad : value]));
  const params = fc.oneof(plausibleParams, oneSpoiled, hostileParams);

  const bodyEncodings: Encoding[] = ['form', 'json', 'json-duplicate-keys', 'multipart', 'multipart-cut', 'text/plain', 'application/xml', 'application/octet-stream', 'malformed-json', 'odd-content-type', 'no-body'];
  const encoding: fc.Arbitrary<Encoding> =
    route.method === 'GET'
      ? fc.constant('query')
      : route.upload
        ? fc.oneof({ arbitrary: fc.constantFrom<Encoding>('multipart', 'multipart-cut'), weight: 4 }, { arbitrary: fc.constantFrom(...bodyEncodings), weight: 1 })
        : fc.oneof({ arbitrary: fc.constantFrom<Encoding>('query', 'form', 'json', 'multipart'), weight: 3 }, { arbitrary: fc.constantFrom(...bodyEncodings), weight: 2 });
  return fc.record({
    params,
    session: sessionSpec,
    encoding,
    files: route.method === 'GET' ? fc.constant([]) : fc.array(fileArb, { minLength: route.upload ? 1 : 0, maxLength: 2 }),
    cut: fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true }), contentLength: fc.constantFrom<'cut' | 'full' | 'absent'>('cut', 'full', 'absent') }),
    garbage: fc.uint8Array({ maxLength: 64 }),
    accept: fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, fc.constantFrom('text/event-stream', 'application/xml', '*/*')),
  });
}
