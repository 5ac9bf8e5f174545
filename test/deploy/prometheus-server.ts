import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnOwned, waitFor } from '@sundial/testing/harness';
import { prometheusBinary } from './tools';

/** One sample of an instant query: its labels and value ('NaN' stays a string, as Prometheus sends it). */
export interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

export type QueryReply =
  { status: 'success'; data: { result: Sample[] } } | { status: 'error'; error: string };

export interface PrometheusServer {
  url: string;
  /** an instant query through the HTTP API (`/api/v1/query`) */
  query(expr: string): Promise<QueryReply>;
  /** GET a path of the HTTP API, parsed */
  get<T>(path: string): Promise<T>;
  stop(): Promise<void>;
}

export interface PrometheusOptions {
  /** job name → `host:port` targets */
  jobs: Record<string, string[]>;
  ruleFiles: string[];
  scrapeIntervalSeconds: number;
  /** labels every target's series carry, as Kubernetes service discovery adds `namespace` */
  targetLabels?: Record<string, string>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * A private Prometheus (Debian's binary) on a free port of 127.0.0.1, with a temp config and data dir,
 * resolved once it is ready. Owned: killed if the test process ends first.
 */
export async function startPrometheus(options: PrometheusOptions): Promise<PrometheusServer> {
  const binary = prometheusBinary('prometheus');
  const dir = mkdtempSync(join(tmpdir(), 'sundial-prometheus-'));
  const interval = `${options.scrapeIntervalSeconds}s`;
  const config = {
    global: { scrape_interval: interval, evaluation_interval: interval },
    rule_files: options.ruleFiles,
    scrape_configs: Object.entries(options.jobs).map(([job, targets]) => ({
      job_name: job,
      static_configs: [{ targets, labels: options.targetLabels ?? {} }],
    })),
  };
  writeFileSync(join(dir, 'prometheus.yml'), JSON.stringify(config)); // JSON is YAML
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let output = '';
  const child: ChildProcess = spawnOwned(
    binary,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
    () => rmSync(dir, { recursive: true, force: true }),
  );
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));

  const get = async <T>(path: string): Promise<T> => (await (await fetch(url + path)).json()) as T;
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}:\n${output}`);
      return (await fetch(`${url}/-/ready`).catch(() => undefined))?.status === 200;
    },
    { timeoutMs: 20_000, intervalMs: 50, what: `prometheus on ${url} to be ready` },
  ).catch((error: Error) => {
    child.kill('SIGKILL');
    throw new Error(`${error.message}\n${output}`);
  });

  return {
    url,
    get,
    query: (expr) => get<QueryReply>(`/api/v1/query?query=${encodeURIComponent(expr)}`),
    stop: async () => {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
