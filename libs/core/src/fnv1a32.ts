/** 32-bit FNV-1a over the UTF-16 code units of `text` (keys are ASCII, so this is FNV-1a over bytes). */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
