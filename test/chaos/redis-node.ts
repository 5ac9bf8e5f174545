import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, spawnOwned, waitFor } from '@sundial/testing/harness';

/**
 * A private redis-server the chaos suite may hurt: SIGKILL or SIGTERM it and start it again on the same
 * port and data dir (so the apps reconnect to the same address and AOF), freeze it (SIGSTOP) and thaw
 * it. `@sundial/testing`'s startRedis gives a server for a suite; this one is a fault target.
 */
export class RedisNode {
  private child: ChildProcess | undefined;
  private admin: Redis | undefined;

  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly args: string[],
  ) {}

  /** `appendfsync`: with AOF on (`always` or `everysec`); none: no persistence. */
  static async start(
    options: { appendfsync?: 'always' | 'everysec'; args?: string[] } = {},
  ): Promise<RedisNode> {
    const persistence = options.appendfsync
      ? ['--appendonly', 'yes', '--appendfsync', options.appendfsync]
      : ['--appendonly', 'no'];
    const node = new RedisNode(await freePort(), mkdtempSync(join(tmpdir(), 'sundial-chaos-')), [
      ...persistence,
      ...(options.args ?? []),
    ]);
    await node.launch();
    return node;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** A side connection for the suite's own commands (CONFIG, CLIENT KILL, inspection). */
  get side(): Redis {
    if (!this.admin) {
      this.admin = new Redis(this.url, { retryStrategy: () => 100, maxRetriesPerRequest: 50 });
      this.admin.on('error', () => undefined);
    }
    return this.admin;
  }

  /** Sends `signal` and, unless it only pauses or resumes, waits for the process to end. */
  async signal(signal: 'SIGKILL' | 'SIGTERM' | 'SIGSTOP' | 'SIGCONT'): Promise<void> {
    const child = this.child!;
    if (signal === 'SIGSTOP' || signal === 'SIGCONT') {
      child.kill(signal);
      return;
    }
    const ended = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await ended;
    this.child = undefined;
  }

  /** Starts the server again on the same port and dir (it loads its AOF). */
  async restart(): Promise<void> {
    await this.launch();
  }

  async stop(): Promise<void> {
    this.admin?.disconnect();
    if (this.child) await this.signal('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async launch(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', ''];
    const base = ['--maxmemory-policy', 'noeviction', '--hz', '100', '--protected-mode', 'no'];
    const child = spawnOwned('redis-server', [...args, ...base, ...this.args], { stdio: 'ignore' });
    this.child = child;
    // Loading an AOF answers LOADING for a while: wait for a real PONG.
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
        return (await ping(this.url)) === 'PONG';
      },
      { timeoutMs: 20_000, intervalMs: 50, what: `redis-server on ${this.port}` },
    );
  }
}

async function ping(url: string): Promise<string | undefined> {
  const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return await probe.ping();
  } catch {
    return undefined;
  } finally {
    probe.disconnect();
  }
}
