/**
 * A redraw (an action's rerender, Refresh, a list's page) replaces the page's nodes: the focused one went
 * with them and the browser moved focus to <body>, so a keyboard user was sent back to the top of the
 * page after each click. The element that had focus is found again in the new page by what it is (its
 * tag, its text, its name) once the page draws it (views draw after their API answer), and focused; if
 * none comes, focus stays in <main> rather than on <body>.
 */

/** How long a redraw is watched for the element: a view draws once its API call answers. */
const WATCH_MS = 10_000;

let stopWatching: (() => void) | undefined;

/** What names a focused element across redraws: its tag, its text and its name or id. */
function identity(element: Element): string {
  const named = element.getAttribute('name') ?? element.id;
  return `${element.tagName}\u0000${named}\u0000${(element.textContent ?? '').trim()}`;
}

function focusable(element: Element): element is HTMLElement {
  return element instanceof HTMLElement && !(element as HTMLButtonElement).disabled;
}

/**
 * The control focus goes to when the focused one comes back disabled — Pause once the timer is paused —,
 * where it went to <main>: the nearest enabled button of its group (the earlier of two as near), Resume
 * beside Pause; not a danger one (Cancel timer), which a second Enter would press.
 */
function standIn(element: Element): HTMLElement | undefined {
  const group = element.closest('[role="group"]');
  if (!group) return undefined;
  const buttons = [...group.querySelectorAll('button')];
  const at = buttons.indexOf(element as HTMLButtonElement);
  return buttons
    .filter((button) => focusable(button) && !button.classList.contains('danger'))
    .sort(
      (a, b) =>
        Math.abs(buttons.indexOf(a) - at) - Math.abs(buttons.indexOf(b) - at) ||
        buttons.indexOf(a) - buttons.indexOf(b),
    )[0];
}

/** Runs `redraw` (which replaces `container`'s content) and puts focus back where it was in it. */
export function redrawKeepingFocus(container: HTMLElement, redraw: () => void): void {
  stopWatching?.();
  const focused = document.activeElement;
  const had = focused && focused !== container && container.contains(focused) ? identity(focused) : null;
  redraw();
  if (had === null) return;
  const find = (): boolean => {
    const same = [...container.querySelectorAll(focused!.tagName)].filter(
      (element) => identity(element) === had,
    );
    const again = same.find(focusable) ?? same.map(standIn).find((element) => element !== undefined);
    if (!again) return false;
    again.focus();
    return true;
  };
  if (find()) return;
  container.focus({ preventScroll: true }); // <main> takes it (tabindex -1) until the element is drawn
  const observer = new MutationObserver(() => {
    // The user moved on meanwhile: theirs is the focus now.
    const now = document.activeElement;
    if (now && now !== document.body && now !== container) return stop();
    if (find()) stop();
  });
  const timer = setTimeout(() => stop(), WATCH_MS);
  const stop = (): void => {
    observer.disconnect();
    clearTimeout(timer);
    stopWatching = undefined;
  };
  stopWatching = stop;
  observer.observe(container, { childList: true, subtree: true });
}
