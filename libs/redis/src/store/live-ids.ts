/**
 * The live ids of a partition as bitmaps (docs/design.md "Live ids", includes/live-ids.lua): id
 * `<seq>p<M>` is bit `seq mod ID_CHUNK` of the bitmap `P:{pN}:i:<M>:<seq div ID_CHUNK>` of the partition
 * N that holds its row; `P:{pN}:ic` names the bitmaps (`<M>:<chunk>`).
 */
export const ID_CHUNK = 65_536;

/** An id as Sundial writes one: `<seq>p<M>`, both decimal without leading zeros. */
const ID = /^(0|[1-9]\d*)p(0|[1-9]\d*)$/;

/**
 * Where an id's bit is: its bitmap's suffix `<M>:<chunk>` and the bit offset; null for no id of ours —
 * also for one spelled another way (`07p1`) or whose seq a double cannot hold exactly, which would read
 * the bit of another id (`7p1`, `9007199254740992p1`).
 */
export function idBit(id: string): { chunk: string; offset: number } | null {
  const match = ID.exec(id);
  if (!match) return null;
  const seq = Number(match[1]);
  if (!Number.isSafeInteger(seq)) return null;
  const chunk = Math.floor(seq / ID_CHUNK);
  return { chunk: `${Number(match[2])}:${chunk}`, offset: seq - chunk * ID_CHUNK };
}

/** The ids whose bits are set in the bitmap `chunk` (Redis numbers bits from each byte's high bit). */
export function idsOfBitmap(chunk: string, bitmap: Buffer): string[] {
  const [origin, index] = chunk.split(':');
  const first = Number(index) * ID_CHUNK;
  const ids: string[] = [];
  bitmap.forEach((byte, i) => {
    for (let bit = 0; byte !== 0 && bit < 8; bit++) {
      if (byte & (0x80 >> bit)) ids.push(`${first + i * 8 + bit}p${origin}`);
    }
  });
  return ids;
}

/** Whether `id` is one Sundial could have written (`check(id)` answers false for any other string). */
export function isTimerId(id: string): boolean {
  return idBit(id) !== null;
}
