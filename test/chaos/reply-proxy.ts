import { proxiedSocket } from '@sundial/testing/harness';
import { createServer, type Server, type Socket } from 'node:net';

/** A command as a client sent it: name upper-cased, then its arguments as text. */
export type SentCommand = string[];

/** The reply to drop: the `nth` (1-based, default 1) command matching `matches`, on any connection. */
export interface ReplyRule {
  matches(command: SentCommand): boolean;
  nth?: number;
  /** only replies this accepts count (default: every reply to a matching command) */
  when?(reply: Buffer): boolean;
  /** runs at the drop, before the client's connection closes */
  then?(): void;
}

/**
 * A TCP proxy on 127.0.0.1 between the apps and the Redis under test. Every byte goes through, except
 * that it can drop ONE reply (Redis ran the command; the connection closes before its reply reaches the
 * client, as when a link breaks at that moment) and it lets the suite watch each command as it passes
 * (to kill a process right after it sent one). Same surface as @sundial/testing's reply dropper
 * (`url`, `dropReplyTo`, `dropped`, `stop`), plus `watch`.
 */
export class ReplyProxy {
  dropped = 0;
  private rule: (ReplyRule & { seen: number }) | undefined;
  private watcher: ((command: SentCommand) => void) | undefined;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<ReplyProxy> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('the proxy has no port');
    const proxy = new ReplyProxy(server, address.port);
    server.on('connection', (client: Socket) => proxy.pipe(client, targetPort));
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Arms a rule (replacing the one armed); `undefined` disarms. */
  dropReplyTo(rule: ReplyRule | undefined): void {
    this.rule = rule && { ...rule, seen: 0 };
  }

  /** Calls `hook` with every command a client sends, after it went on to Redis. */
  watch(hook: ((command: SentCommand) => void) | undefined): void {
    this.watcher = hook;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private pipe(client: Socket, targetPort: number): void {
    const { server: upstream, close } = proxiedSocket(client, { port: targetPort }, this.sockets);

    // Redis answers a connection's commands in order: per command in flight, the rule it matched.
    const drops: (ReplyRule | undefined)[] = [];
    // After (P)SUBSCRIBE, messages come without commands: stop pairing and pass everything.
    let subscribed = false;
    let sent = Buffer.alloc(0);
    let answered = Buffer.alloc(0);

    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      if (subscribed) return;
      sent = Buffer.concat([sent, chunk]);
      for (let value = readValue(sent, 0); value; value = readValue(sent, 0)) {
        sent = sent.subarray(value.end);
        const command = (value.items ?? []).map(String);
        command[0] = (command[0] ?? '').toUpperCase();
        if (command[0].endsWith('SUBSCRIBE')) subscribed = true;
        drops.push(this.rule?.matches(command) ? this.rule : undefined);
        this.watcher?.(command);
      }
    });

    upstream.on('data', (chunk: Buffer) => {
      if (subscribed) {
        client.write(Buffer.concat([answered, chunk]));
        answered = Buffer.alloc(0);
        return;
      }
      answered = Buffer.concat([answered, chunk]);
      let start = 0;
      for (let value = readValue(answered, start); value; value = readValue(answered, start)) {
        if (this.picks(drops.shift(), answered.subarray(start, value.end))) {
          client.write(answered.subarray(0, start));
          this.dropped++;
          this.rule = undefined;
          close();
          return;
        }
        start = value.end;
      }
      client.write(answered.subarray(0, start));
      answered = answered.subarray(start);
    });
  }

  /** Whether this reply is the one to drop (running the rule's `then` if so). */
  private picks(matched: ReplyRule | undefined, reply: Buffer): boolean {
    const rule = this.rule;
    if (!rule || matched !== rule || (rule.when && !rule.when(reply))) return false;
    if (++rule.seen !== (rule.nth ?? 1)) return false;
    rule.then?.();
    return true;
  }
}

/** One RESP2 value at `offset`: where it ends and, for an array, its items as text; undefined while incomplete. */
export function readValue(buffer: Buffer, offset: number): { end: number; items?: string[] } | undefined {
  const lineEnd = buffer.indexOf('\r\n', offset);
  if (lineEnd < 0) return undefined;
  const head = buffer.toString('latin1', offset + 1, lineEnd);
  const next = lineEnd + 2;
  switch (buffer[offset]) {
    case 0x24 /* $ */: {
      const length = Number(head);
      if (length < 0) return { end: next };
      return buffer.length < next + length + 2 ? undefined : { end: next + length + 2 };
    }
    case 0x2a /* * */: {
      const items: string[] = [];
      let end = next;
      for (let i = 0; i < Number(head); i++) {
        const item = readValue(buffer, end);
        if (!item) return undefined;
        // a bulk string's text is between its header line and its end
        items.push(buffer.toString('utf8', buffer.indexOf('\r\n', end) + 2, item.end - 2));
        end = item.end;
      }
      return { end, items };
    }
    default: // + - : and RESP3 scalars are one line
      return { end: next };
  }
}
