/** Settles as `work` does, or rejects when it has not settled within `ms` (a deadline, never a sleep). */
export async function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const missed = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([work, missed]).finally(() => clearTimeout(timer));
}
