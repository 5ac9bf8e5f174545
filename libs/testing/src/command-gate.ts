import { createServer, type Server, type Socket } from 'node:net';
import { proxiedSocket } from './proxied-socket';

/**
 * A TCP proxy on 127.0.0.1 in front of a redis-server that holds a process at one point of its work:
 * every byte goes through until a client sends a command whose text matches `holds` (`/FUNCTION/i`, the
 * RESP bytes read as latin1); from then on nothing more of that connection reaches Redis — the command
 * and the ones after it wait for replies — until `release`. `held` resolves at that moment. Other
 * connections go on untouched. `release({ replyDelayMs })` lets everything through from then on, each
 * reply that many ms late: a slow Redis, whose round trips a process's shutdown waits for.
 */
export class CommandGate {
  /** resolves when the first matching command was held (since the last holdNext()) */
  held: Promise<void>;
  private markHeld: () => void = () => undefined;
  private readonly sockets = new Set<Socket>();
  private readonly waiting: (() => void)[] = [];
  private released = false;
  private replyDelayMs = 0;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {
    this.held = new Promise<void>((resolve) => (this.markHeld = resolve));
  }

  static async start(target: { port: number }, holds: RegExp): Promise<CommandGate> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('proxy has no port');
    const gate = new CommandGate(server, address.port);
    server.on('connection', (client: Socket) => gate.connect(client, target.port, holds));
    return gate;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Lets the held connections go on (what they sent meanwhile reaches Redis now, in order). */
  release({ replyDelayMs = 0 }: { replyDelayMs?: number } = {}): void {
    this.released = true;
    this.replyDelayMs = replyDelayMs;
    for (const resume of this.waiting.splice(0)) resume();
  }

  /**
   * Holds again after a release: the next matching command (connections made before included) waits
   * for the next release. Resolves when it is held (as `held`, which it replaces).
   */
  holdNext(): Promise<void> {
    this.released = false;
    this.held = new Promise<void>((resolve) => (this.markHeld = resolve));
    return this.held;
  }

  /**
   * Ends every connection as a network reset would: what a held one kept never reaches Redis. Later
   * connections go through untouched.
   */
  cut(): void {
    this.released = true;
    for (const socket of this.sockets) socket.destroy();
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private connect(client: Socket, port: number, holds: RegExp): void {
    const { server } = proxiedSocket(client, { port }, this.sockets);
    server.on('data', (chunk: Buffer) => {
      if (this.replyDelayMs === 0) client.write(chunk);
      else setTimeout(() => client.write(chunk), this.replyDelayMs);
    });
    let holding: Buffer[] | undefined;
    client.on('data', (chunk: Buffer) => {
      if (!holding && !this.released && holds.test(chunk.toString('latin1'))) {
        holding = [];
        this.waiting.push(() => {
          for (const held of holding!) server.write(held);
          holding = undefined;
        });
        this.markHeld();
      }
      if (holding) holding.push(chunk);
      else server.write(chunk);
    });
  }
}
