import type { INestApplication } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import { VirtualClock } from '@sundial/core';
import { SundialTestingModule } from '@sundial/testing';
import { MemoryOutbox, type Notification, Outbox } from '../src/outbox';
import { RemindersModule } from '../src/reminders.module';

describe('examples/reminders on the testing module', () => {
  let app: INestApplication;
  let clock: VirtualClock;
  let base: string;

  beforeEach(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ConfigModule.forRoot({
          ignoreEnvFile: true,
          isGlobal: true,
          load: [() => ({ DIGEST_CRON: '0 8 * * *', HEARTBEAT_EVERY: '15m' })],
        }),
        SundialTestingModule.forRoot({ now: '2026-03-16T12:00:00Z', appName: 'reminders' }),
        RemindersModule.register({ outbox: { provide: Outbox, useClass: MemoryOutbox }, replica: 'test' }),
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    base = `${await app.getUrl()}/entities`;
    clock = app.get(VirtualClock);
  });

  afterEach(async () => {
    await app.close();
  });

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const sent = async (kind: Notification['kind']) =>
    (await app.get(Outbox).all()).filter((notification) => notification.kind === kind);

  it('two weeks of reminders, snoozes, cancels, digests and heartbeats', async () => {
    expect((await post('invoice-1/reminders/first', { text: 'pay', delay: '3d' })).status).toBe(201);
    expect((await post('invoice-2/reminders/first', { text: 'pay now', delay: '1d' })).status).toBe(201);
    expect((await post('invoice-3/reminders/first', { text: 'never', delay: '2d' })).status).toBe(201);
    expect((await post('invoice-2/reminders/first/snooze', { delay: '5d' })).status).toBe(200);
    expect((await fetch(`${base}/invoice-3/reminders`, { method: 'DELETE' })).status).toBe(200);

    await clock.advance('14d');

    expect((await sent('reminder')).map(({ entity, due }) => [entity, new Date(due).toISOString()])).toEqual([
      ['invoice-1', '2026-03-19T12:00:00.000Z'],
      ['invoice-2', '2026-03-21T12:00:00.000Z'],
    ]);
    const digests = (await sent('digest')).map(({ due }) => new Date(due).toISOString());
    // 08:00 in Paris: 07:00 UTC, then 06:00 UTC from the switch to summer time (2026-03-29).
    expect(digests).toHaveLength(14);
    expect(digests[0]).toBe('2026-03-17T07:00:00.000Z');
    expect(digests.at(-1)).toBe('2026-03-30T06:00:00.000Z');
    expect(await sent('heartbeat')).toHaveLength(14 * 24 * 4);
  });

  it('a write retried with the same Idempotency-Key (after a 503 outcome-unknown) is applied once', async () => {
    const versionOf = async (response: Response) => ((await response.json()) as { version: number }).version;
    const snooze = (key: string) =>
      post('invoice-1/reminders/r/snooze', { delay: '2d' }, { 'idempotency-key': key });
    expect(await versionOf(await post('invoice-1/reminders/r', { text: 'pay', delay: '1d' }))).toBe(1);
    expect(await versionOf(await snooze('snooze-1'))).toBe(2);
    // the retry answers as the first call did and moves nothing; a new key is a new snooze
    expect(await versionOf(await snooze('snooze-1'))).toBe(2);
    expect(await versionOf(await snooze('snooze-2'))).toBe(3);
    // the same key for other arguments is refused, and changes nothing
    const reused = await post(
      'invoice-1/reminders/r/snooze',
      { delay: '3d' },
      { 'idempotency-key': 'snooze-1' },
    );
    expect(reused.status).toBe(422);
    expect(await reused.json()).toMatchObject({
      error: { reason: 'idempotency-conflict', field: 'requestId' },
    });
    const cancel = () =>
      fetch(`${base}/invoice-1/reminders/r`, {
        method: 'DELETE',
        headers: { 'idempotency-key': 'cancel-1' },
      });
    expect(await (await cancel()).json()).toEqual({ cancelled: true });
    expect(await (await cancel()).json()).toEqual({ cancelled: true }); // the first answer, not `false`
  });

  it('answers a snooze of an unknown reminder with 404 and the reason', async () => {
    const response = await post('invoice-9/reminders/nope/snooze', { delay: '1h' });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { reason: 'not-found' } });
  });
});
