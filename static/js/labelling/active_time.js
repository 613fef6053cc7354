/* Active time on a label: it counts while the page is visible, has the focus and had input
 * (a key, a click, the wheel, a touch, a scroll) in the last `idleMs`; whole seconds go out with
 * each draft and save as an increment, and come back to the count if the request fails. */
export function activeTimer(idleMs) {
  let lastInput = Date.now(), lastTick = Date.now(), ms = 0;
  function input() { lastInput = Date.now(); }
  ["keydown", "mousedown", "wheel", "touchstart", "scroll", "input"].forEach((name) => {
    window.addEventListener(name, input, { capture: true, passive: true });
  });
  window.setInterval(() => {
    const now = Date.now(), step = Math.min(now - lastTick, 2000);  // a sleeping laptop adds nothing
    lastTick = now;
    if (document.visibilityState === "visible" && document.hasFocus() && now - lastInput < idleMs) ms += step;
  }, 1000);
  return {
    take() { const s = Math.floor(ms / 1000); ms -= s * 1000; return s; },
    giveBack(s) { ms += s * 1000; }
  };
}
