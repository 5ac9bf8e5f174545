import { checkDueBefore, refusals, SundialError } from '@sundial/core';
import { httpKeyNotFoundFix } from '../../scheduler/src/http-error.filter';
import { idempotencyConflict } from '../../scheduler/src/idempotency-key';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { main } from './main';

describe('sundial CLI: the request each command sends', () => {
  let server: Server;
  let url: string;
  const seen: { method: string; url: string; body: string; headers: IncomingMessage['headers'] }[] = [];
  let reply: { status: number; body: unknown } = { status: 200, body: {} };

  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        seen.push({ method: request.method!, url: request.url!, body, headers: request.headers });
        response.writeHead(reply.status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(reply.body));
      });
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise<void>((closed) => server.close(() => closed())));

  beforeEach(() => {
    seen.length = 0;
    jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
  });
  afterEach(() => jest.restoreAllMocks());

  const env = () => ({ SUNDIAL_URL: url, SUNDIAL_TOKEN: 't0k' });

  it('backfill posts { from, to } to the timer path, with the token and an Idempotency-Key', async () => {
    reply = { status: 200, body: { key: 'a/b', slots: 3 } };
    const code = await main(
      [
        'backfill',
        'a/b',
        '--from',
        '2026-11-01T00:00:00Z',
        '--to',
        '2026-11-02T00:00:00Z',
        '--idempotency-key',
        'r1',
      ],
      env(),
    );
    expect(code).toBe(0);
    expect(seen).toEqual([
      expect.objectContaining({
        method: 'POST',
        url: '/v1/timers/a%2Fb/backfill',
        body: JSON.stringify({ from: '2026-11-01T00:00:00Z', to: '2026-11-02T00:00:00Z' }),
        headers: expect.objectContaining({ authorization: 'Bearer t0k', 'idempotency-key': 'r1' }),
      }),
    ]);
    expect(process.stdout.write).toHaveBeenCalledWith('backfill of a/b: 3 slot(s) to run\n');
  });

  it('backfill without --to is a usage error (exit 2) and sends nothing', async () => {
    expect(await main(['backfill', 'k', '--from', '2026-11-01T00:00:00Z'], env())).toBe(2);
    expect(seen).toEqual([]);
    expect(process.stderr.write).toHaveBeenCalledWith(
      expect.stringMatching(/--from and --to are required\nfix: Usage/),
    );
  });

  // It was taken and dropped: preview sends no Idempotency-Key (the API ignores one there: it writes nothing).
  it('preview with --idempotency-key is a usage error saying a preview writes nothing, and sends nothing', async () => {
    const argv = ['preview', '--key', 'a', '--handler', 'h', '--delay', '1h', '--idempotency-key', 'r1'];
    expect(await main(argv, env())).toBe(2);
    expect(seen).toEqual([]);
    expect(process.stderr.write).toHaveBeenCalledWith(
      expect.stringMatching(
        /--idempotency-key: a preview writes nothing.*\nfix: Leave out --idempotency-key/,
      ),
    );
  });

  // Before, `sundial get ..` asked GET /v1/ (a URL resolves the segment) and printed that route's 404 with
  // a fix naming SUNDIAL_URL: nothing said the key itself cannot be named.
  it('a key . or .. is a usage error saying why, and sends nothing', async () => {
    for (const argv of [
      ['get', '..'],
      ['cancel', '.'],
      ['history', '..'],
      ['pause', '.'],
    ]) {
      expect(await main(argv, env())).toBe(2);
      expect(process.stderr.write).toHaveBeenLastCalledWith(
        expect.stringMatching(
          /^sundial: usage: key "\.\.?" is a URL dot-segment: no HTTP route can name it\nfix: A timer key is never \. or \.\./,
        ),
      );
    }
    expect(seen).toEqual([]);
  });

  // Before, `--json=1` was not seen as --json (text printed), and `--all=true` was not --all (refused
  // as a cancel without key), `--show-payload=yes` hid the payload: the value was dropped unread.
  it('a flag given a value (--json=1, --all=true) is a bad command line that sends nothing', async () => {
    reply = { status: 200, body: { cancelled: 2 } };
    for (const argv of [
      ['get', 'k', '--json=1'],
      ['cancel', '--all=true'],
      ['get', 'k', '--show-payload=yes'],
    ]) {
      const flagged = argv[argv.length - 1];
      const name = flagged.slice(0, flagged.indexOf('='));
      expect(await main(argv, env())).toBe(2);
      expect(process.stderr.write).toHaveBeenLastCalledWith(
        `sundial: usage: ${name} takes no value (got ${flagged})\nfix: Write ${name} alone to turn it on, or leave it out.\n`,
      );
    }
    expect(seen).toEqual([]);
  });

  // Before, `--json` after `--` still turned JSON on (the key "--json" cancelled, the answer in JSON),
  // and `-h` after it printed the usage instead of naming a key.
  it('after `--` everything is an argument: --json and -h name keys, not options', async () => {
    reply = { status: 200, body: { cancelled: true } };
    expect(await main(['cancel', '--', '--json'], env())).toBe(0);
    expect(await main(['cancel', '--', '-h'], env())).toBe(0);
    expect(seen.map((request) => `${request.method} ${request.url}`)).toEqual([
      'DELETE /v1/timers/--json',
      'DELETE /v1/timers/-h',
    ]);
    expect(process.stdout.write).toHaveBeenNthCalledWith(1, 'cancelled --json\n');
    expect(process.stdout.write).toHaveBeenNthCalledWith(2, 'cancelled -h\n');
  });

  it('cancel --prefix <scope> and --all send the scope or all=true; an empty --prefix is a usage error', async () => {
    reply = { status: 200, body: { cancelled: 2 } };
    expect(await main(['cancel', '--prefix', 'inv:42:'], env())).toBe(0);
    expect(await main(['cancel', '--all'], env())).toBe(0);
    expect(seen.map((request) => `${request.method} ${request.url}`)).toEqual([
      'DELETE /v1/timers?prefix=inv%3A42%3A',
      'DELETE /v1/timers?all=true',
    ]);
    expect(process.stdout.write).toHaveBeenCalledWith('cancelled 2 timer(s): every timer\n');
    seen.length = 0;
    for (const argv of [['--prefix', ''], ['--prefix='], ['k', '--all'], ['--prefix', 'a:', '--all']]) {
      expect(await main(['cancel', ...argv], env())).toBe(2);
      expect(process.stderr.write).toHaveBeenLastCalledWith(
        expect.stringMatching(/fix: .*--all to cancel every timer on purpose/),
      );
    }
    expect(seen).toEqual([]);
  });

  it('a 5xx answer exits 3 (retrying may help), a 4xx exits 1, each with the reason and fix', async () => {
    reply = {
      status: 503,
      body: { error: { reason: 'unavailable', message: 'Redis is away', fix: 'Retry.' } },
    };
    expect(await main(['get', 'k'], env())).toBe(3);
    reply = { status: 409, body: { error: { reason: 'inactive', message: 'k is running', fix: 'Wait.' } } };
    expect(await main(['pause', 'k'], env())).toBe(1);
    expect(process.stderr.write).toHaveBeenLastCalledWith(
      'sundial: inactive: k is running [HTTP 409]\nfix: Wait.\n',
    );
  });

  it('a 401 says to set SUNDIAL_TOKEN (the API names its header, which the CLI sends from it)', async () => {
    const error = { reason: 'unauthorized', field: 'authorization', fix: 'Send the header …' };
    reply = { status: 401, body: { error: { ...error, message: 'missing Authorization header' } } };
    expect(await main(['list'], { ...env(), SUNDIAL_TOKEN: '' })).toBe(1);
    expect(process.stderr.write).toHaveBeenLastCalledWith(
      'sundial: unauthorized (field authorization): missing Authorization header [HTTP 401]\n' +
        "fix: Set SUNDIAL_TOKEN to the scheduler's SUNDIAL_API_TOKEN.\n",
    );
    reply = {
      status: 401,
      body: { error: { ...error, message: 'the API token sent is not the configured one' } },
    };
    expect(await main(['list'], env())).toBe(1);
    expect(process.stderr.write).toHaveBeenLastCalledWith(
      expect.stringContaining("fix: SUNDIAL_TOKEN is not the scheduler's token: set SUNDIAL_TOKEN to"),
    );
  });

  describe('a refusal’s fix is the command to run, not the HTTP route, header or in-process call', () => {
    /** The error body the scheduler sends for `error` (its filter's rewrites included). */
    const sent = (error: SundialError, over: object = {}) => ({ ...error.toJSON(), ...over });
    const FROM_TO = ['--from', '2026-11-01T00:00:00Z', '--to', '2026-11-02T00:00:00Z'];
    const cases: [string[], number, object, string][] = [
      [
        ['get', 'inv:42'],
        404,
        sent(refusals.notFound('inv:42'), { fix: httpKeyNotFoundFix('inv:42') }),
        'Check the key; sundial list --prefix inv: lists the timers under it. One listed as completed or failed has ended (kept by --remove-on-complete false): sundial again inv:42, or schedule it again to run it. One removed when it ended (a one-shot after its run, by default) keeps its history for 7 days: sundial history inv:42.',
      ],
      [
        ['history', 'solo'],
        404,
        sent(refusals.notFound('solo'), { fix: httpKeyNotFoundFix('solo') }),
        'Check the key; sundial list lists the timers under it. One listed as completed or failed has ended (kept by --remove-on-complete false): sundial again solo, or schedule it again to run it. One removed when it ended (a one-shot after its run, by default) keeps its history for 7 days: sundial history solo.',
      ],
      [
        ['schedule', '--key', 'a b', '--handler', 'log', '--delay', '1h'],
        409,
        sent(refusals.duplicateKey('a b')),
        "Add --if-exists replace to supersede it, or --if-exists keep to get it back; or run sundial cancel 'a b' first.",
      ],
      [
        ['pause', 'k'],
        409,
        sent(refusals.inactive('k', 'running', 'pause')),
        'Wait for the run to end (sundial get k shows its status), or schedule it again with --if-exists replace to supersede the running work.',
      ],
      [
        ['trigger', 'k'],
        409,
        sent(refusals.inactive('k', 'paused', 'trigger')),
        'Run sundial resume k first.',
      ],
      // the status is read from the refusal's detail, whatever its message says
      [
        ['trigger', 'k'],
        409,
        sent(refusals.inactive('k', 'paused', 'trigger'), { message: 'k: paused' }),
        'Run sundial resume k first.',
      ],
      [
        ['cancel', 'k', '--idempotency-key', 'r1'],
        422,
        sent(refusals.idempotencyConflict('r1'), idempotencyConflict('r1')),
        'Run it again with exactly the same arguments, or pass a new --idempotency-key for a new request.',
      ],
      [
        ['resume', 'k', '--idempotency-key', 'é'],
        400,
        refusals
          .invalid('Idempotency-Key', 'Idempotency-Key must be …', 'Pass e.g. a UUID: Idempotency-Key: x.')
          .toJSON(),
        'Pass --idempotency-key 1 to 255 printable ASCII characters without spaces, e.g. a UUID (uuidgen).',
      ],
      [
        ['backfill', 'once:1', ...FROM_TO],
        400,
        sent(refusals.backfillNotPeriodic('once:1')),
        'Backfill an every or cron timer, or run sundial trigger once:1 to run a one-shot timer now.',
      ],
      [
        ['cancel', 'k'],
        503,
        sent(refusals.outcomeUnknown(new Error('Connection is closed.'))),
        'Run the same command again with the same --idempotency-key: a repeat changes nothing more. Without one, check with sundial get k before running it again.',
      ],
      [
        ['list', '--due-before', 'soon'],
        400,
        refusals
          .invalid(
            'dueBefore',
            'dueBefore "soon" is not an instant',
            'Pass dueBefore as epoch ms (over HTTP: …).',
          )
          .toJSON(),
        "Write --due-before as an ISO instant (e.g. 2026-03-01T09:00:00Z), epoch ms, or +<n>s|m|h|d after the scheduler's now (-<n>s|m|h|d before it).",
      ],
      [
        ['list', '--status', 'failed', '--due-before', '+1h'],
        400,
        sent(refused(() => checkDueBefore({ status: 'failed', dueBefore: 1 }))),
        'Leave out --status (or pass --status pending) with --due-before.',
      ],
      [
        ['list', '--cursor', 'bogus'],
        400,
        refusals
          .invalid(
            'cursor',
            'The cursor is not one list() returned.',
            'Pass the nextCursor of the previous page, or omit it to start over.',
          )
          .toJSON(),
        'Pass the --cursor a previous page printed (its "more:" line), or leave it out to start over.',
      ],
      [
        ['list', '--prefix', 'b:', '--cursor', 'eyJhZnRlciI6ImE6MSIsIm9mIjoiMSJ9'],
        400,
        {
          reason: 'invalid',
          field: 'cursor',
          message: 'The cursor is the nextCursor of a page of another prefix (…).',
          fix: 'Send the cursor with … (over HTTP: …).',
          detail: { code: 'cursor-other-list' },
        },
        'Run the "more:" line the page that printed this --cursor ended with: its --prefix, --status and --due-before go with it. Or leave --cursor out to start over.',
      ],
      [
        ['list'],
        404,
        {
          reason: 'not-found',
          message: 'Cannot GET /v1/timers',
          fix: 'See GET /docs for the routes this API offers.',
        },
        'Check that SUNDIAL_URL (URL) is the root of a Sundial scheduler of this version.',
      ],
    ];

    it.each(cases)('sundial %j answered %i', async (argv, status, error, fix) => {
      reply = { status, body: { error } };
      expect(await main(argv, env())).toBe(status >= 500 ? 3 : 1);
      const printed = String(jest.mocked(process.stderr.write).mock.lastCall?.[0]);
      expect(printed).toMatch(/^sundial: [\w-]+/);
      expect(printed.split('\nfix: ')[1]).toBe(`${fix.replace('(URL)', `(${url})`)}\n`);
      expect(printed.split('\nfix: ')[1]).not.toMatch(
        /\/v1\/|ifExists|requestId|Idempotency-Key|dueBefore|nextCursor|\w\(/,
      );
    });
  });
});

/** The SundialError `call` throws. */
function refused(call: () => unknown): SundialError {
  try {
    call();
  } catch (error) {
    if (error instanceof SundialError) return error;
  }
  throw new Error('not refused');
}
