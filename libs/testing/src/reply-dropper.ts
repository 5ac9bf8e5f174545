import { createServer, type Server, type Socket } from 'node:net';
import { proxiedSocket } from './proxied-socket';

/** A command as the client sent it: its name (upper case) and arguments, as text. */
export type SentCommand = string[];

/** Which reply to drop: the `nth` (1-based) command matching `matches` seen on any connection. */
export interface DropRule {
  matches(command: SentCommand): boolean;
  nth?: number;
  /** after the drop, stop listening this long: connections are refused (so a client's own retries run out) */
  refuseMs?: number;
}

/**
 * A TCP proxy on 127.0.0.1 in front of a private redis-server (RESP2 or RESP3) that lets every byte through except
 * exactly ONE reply: the one to the command a rule picks. Redis has run that command; its reply never
 * reaches the client, whose socket is closed at that moment (as when a connection drops after Redis
 * answered). Everything else — the reconnect, what the client sends again — goes through untouched.
 * A picked SUBSCRIBE (PSUBSCRIBE, SSUBSCRIBE) is cut as it is sent: the client hears none of its
 * confirmations, whether Redis ran it or not (the connection is gone, and with it the subscription).
 */
export class ReplyDropper {
  /** the replies dropped so far (0 or 1 per armed rule) */
  dropped = 0;
  private rule: (DropRule & { seen: number }) | undefined;
  private reopening: Promise<void> | undefined;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(target: { host?: string; port: number }): Promise<ReplyDropper> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('proxy has no port');
    const dropper = new ReplyDropper(server, address.port);
    server.on('connection', (client: Socket) => dropper.connect(client, target));
    return dropper;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Drops the reply to the next `nth` command matching the rule (once), then lets everything through. */
  dropReplyTo(rule: DropRule): void {
    this.rule = { ...rule, seen: 0 };
  }

  /** Forgets the rule and the count (between tests). */
  reset(): void {
    this.rule = undefined;
    this.dropped = 0;
  }

  async stop(): Promise<void> {
    await this.reopening;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Resolves once the proxy listens again after a refusal window. */
  async listening(): Promise<void> {
    await this.reopening;
  }

  /** Closes the listening socket for `ms` (the outage itself), then listens on the same port again. */
  private refuse(ms: number): void {
    this.server.close();
    this.reopening = new Promise<void>((resolve) => {
      setTimeout(() => this.server.listen(this.port, '127.0.0.1', resolve), ms);
    });
  }

  private connect(client: Socket, target: { host?: string; port: number }): void {
    const { server, close } = proxiedSocket(client, target, this.sockets);

    // One flag per command in flight, in order: Redis replies in the order it was sent commands.
    const dropFlags: boolean[] = [];
    let passThrough = false; // after SUBSCRIBE, messages arrive without commands: stop counting
    let fromClient = Buffer.alloc(0);
    let fromServer = Buffer.alloc(0);

    client.on('data', (chunk: Buffer) => {
      server.write(chunk);
      if (passThrough) return;
      fromClient = Buffer.concat([fromClient, chunk]);
      for (;;) {
        const parsed = parseValue(fromClient, 0);
        if (!parsed) break;
        fromClient = fromClient.subarray(parsed.end);
        const command = (parsed.value as string[]).map(String);
        command[0] = command[0].toUpperCase();
        if (command[0].endsWith('SUBSCRIBE')) passThrough = true;
        const picked = this.picks(command);
        // Its answer is a push, not told apart from the messages that follow: cut as it is sent instead.
        if (picked && passThrough) {
          this.dropped++;
          close();
          return;
        }
        dropFlags.push(picked);
      }
    });

    server.on('data', (chunk: Buffer) => {
      if (passThrough) {
        client.write(chunk);
        return;
      }
      fromServer = Buffer.concat([fromServer, chunk]);
      let start = 0;
      for (;;) {
        const parsed = parseValue(fromServer, start);
        if (!parsed) break;
        // A push (RESP3 pub/sub message) answers no command.
        if (!parsed.push && dropFlags.shift()) {
          // Redis ran it; the client never hears back. Replies before it were delivered.
          client.write(fromServer.subarray(0, start));
          this.dropped++;
          close();
          return;
        }
        start = parsed.end;
      }
      client.write(fromServer.subarray(0, start));
      fromServer = fromServer.subarray(start);
    });
  }

  private picks(command: SentCommand): boolean {
    const rule = this.rule;
    if (!rule || !rule.matches(command)) return false;
    rule.seen++;
    if (rule.seen !== (rule.nth ?? 1)) return false;
    this.rule = undefined;
    if (rule.refuseMs) this.refuse(rule.refuseMs);
    return true;
  }
}

type RespValue = string | number | boolean | null | RespValue[] | Error;

/** A RESP2 or RESP3 value (ioredis 6 speaks RESP3) and whether it was a push (no command's reply). */
interface Parsed {
  value: RespValue;
  end: number;
  push: boolean;
}

/** One RESP value from `buffer` at `offset`, or undefined when it is not all there yet. */
function parseValue(buffer: Buffer, offset: number): Parsed | undefined {
  const lineEnd = buffer.indexOf('\r\n', offset);
  if (lineEnd < 0) return undefined;
  const type = String.fromCharCode(buffer[offset]);
  const line = buffer.toString('utf8', offset + 1, lineEnd);
  const next = lineEnd + 2;
  const scalar = (value: RespValue): Parsed => ({ value, end: next, push: false });
  switch (type) {
    case '+':
      return scalar(line);
    case '-':
      return scalar(new Error(line));
    case ':':
    case ',':
    case '(':
      return scalar(Number(line));
    case '#':
      return scalar(line === 't');
    case '_':
      return scalar(null);
    case '$':
    case '=':
    case '!': {
      const length = Number(line);
      if (length < 0) return scalar(null);
      if (buffer.length < next + length + 2) return undefined;
      const text = buffer.toString('utf8', next, next + length);
      return { value: type === '!' ? new Error(text) : text, end: next + length + 2, push: false };
    }
    case '*':
    case '~':
    case '>':
    case '%':
    case '|': {
      const count = Number(line);
      if (count < 0) return scalar(null);
      const items: RespValue[] = [];
      let end = next;
      for (let i = 0; i < (type === '%' || type === '|' ? 2 * count : count); i++) {
        const item = parseValue(buffer, end);
        if (!item) return undefined;
        items.push(item.value);
        end = item.end;
      }
      if (type === '|') {
        // Attributes come before the value they describe: the value is what counts.
        return parseValue(buffer, end);
      }
      return { value: items, end, push: type === '>' };
    }
    default:
      throw new Error(`unexpected RESP type '${type}'`);
  }
}
