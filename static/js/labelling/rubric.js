/* The cumulative rubric on the client: the points the checkpoint marks propose and the checks
 * the labelling screen shows at once. The rule is the server's (annotation/labelling/rules.py:
 * `propose` and `Proposal.admits`), which has the last word; this one copy gives instant
 * feedback, and tests/labelling/test_rubric_rule_browser.py runs both on the same cases.
 * Pure functions: no DOM, no page state. Points are handled in hundredths (integers).
 */

// "2.5" -> 250; "" / null -> null; anything but a number with at most 2 decimals -> NaN.
export function cents(value) {
  if (value === null || value === undefined || String(value).trim() === "") return null;
  const text = String(value).trim();
  if (!/^\d+(\.\d{0,2})?$/.test(text)) return NaN;
  return Math.round(parseFloat(text) * 100);
}

export function showCents(c) { return c === null ? "—" : String(c / 100); }

// What the marks of one group's checkpoints support: {low, high, open} in hundredths, `high`
// excluded when `open` (it comes from a "partly" mark), or null when nothing is marked.
// checkpoints: [{id, points}] (points relative to the sub-question); marks: {"id": mark}.
export function proposal(checkpoints, marks) {
  const states = checkpoints.map((c) => marks[String(c.id)] || null);
  if (!states.some(Boolean)) return null;
  let low = 0;
  for (let i = 0; i < checkpoints.length && states[i] === "reached"; i++) low = cents(checkpoints[i].points);
  let high = low, open = false;
  checkpoints.forEach((c, i) => {
    const p = cents(c.points);
    if (states[i] === "reached" && p >= high) { high = p; open = false; }
    else if (states[i] === "partly" && p > high) { high = p; open = true; }
  });
  return { low, high: Math.max(high, low), open: open && high > low };
}

export function admits(prop, c) {
  if (c < prop.low) return false;
  return prop.open ? (c < prop.high || c === prop.low) : c <= prop.high;
}

// Marking checkpoint `index` as the highest step reached (or partly): every checkpoint before it
// is reached, later "reached" marks go. Returns the new marks (the argument is left alone).
export function markCheckpoint(checkpoints, marks, index, value) {
  const next = Object.assign({}, marks);
  if (value === "reached" || value === "partly") {
    for (let i = 0; i < index; i++) next[String(checkpoints[i].id)] = "reached";
    for (let j = index + 1; j < checkpoints.length; j++) {
      if (next[String(checkpoints[j].id)] === "reached") delete next[String(checkpoints[j].id)];
    }
  }
  const key = String(checkpoints[index].id);
  if (value) next[key] = value; else delete next[key];
  return next;
}

// The checks of a whole label: per group its points (hundredths), an error, whether the points
// override the rubric; the total and whether it exceeds the full score. Messages come from
// `messages` ({notNumber, atMost(max), totalTooHigh}) so that they are written in one place.
export function check(groups, pointsOf, marks, fullScore, messages) {
  const rows = groups.map((g, index) => {
    const c = cents(pointsOf(index));
    const row = { cents: c, error: "", override: false, prop: proposal(g.checkpoints, marks) };
    if (Number.isNaN(c)) row.error = messages.notNumber;
    else if (c !== null && g.max !== null && c > cents(g.max)) row.error = messages.atMost(Number(g.max));
    else if (c !== null && row.prop && !admits(row.prop, c)) row.override = true;
    return row;
  });
  let total = null;
  rows.forEach((r) => { if (r.cents !== null && !Number.isNaN(r.cents)) total = (total || 0) + r.cents; });
  const totalError = total !== null && total > cents(fullScore) ? messages.totalTooHigh : "";
  return { rows, total, totalError, overrides: rows.some((r) => r.override) };
}
