/**
 * Whether `work` settled (either way) within `ms`; it goes on regardless. The timer is cleared as soon
 * as `work` settles, so no handle outlives the wait.
 */
export async function settledWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(resolve, ms, false)));
  const settled = work.then(
    () => true,
    () => true,
  );
  try {
    return await Promise.race([settled, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
