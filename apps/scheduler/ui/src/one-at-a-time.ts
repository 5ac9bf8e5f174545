/**
 * One write at a time from a page (docs/spec.md §5.6): a double-click on Run again sent two POSTs, the
 * second answered `duplicate-key` ("a live timer now holds this key") over the first's "scheduled again";
 * a double-click on Pause said "already paused: nothing changed" over "paused". While a press is being
 * answered (its question included), another press of any of the page's actions does nothing: the buttons
 * say so (`aria-disabled`), and keep the keyboard's focus (a disabled button would lose it, keep-focus.ts).
 */

import { beginPress, endPress } from './write-key.js';

/**
 * Runs `work` for a press unless one of this page's presses is still being answered; its writes carry a
 * fresh Idempotency-Key, or `key` (a Retry's: the lost write's own), write-key.ts.
 */
export type OneAtATime = (work: () => Promise<void>, key?: string) => Promise<void>;

export function oneAtATime(): OneAtATime {
  let busy = false;
  return async (work, key) => {
    if (busy) return;
    busy = true;
    beginPress(key);
    const pressed = [...document.querySelectorAll<HTMLButtonElement>('main button:not([disabled])')];
    for (const button of pressed) button.setAttribute('aria-disabled', 'true');
    try {
      await work();
    } finally {
      endPress();
      busy = false;
      for (const button of pressed) button.removeAttribute('aria-disabled');
    }
  };
}
