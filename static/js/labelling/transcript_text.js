/* The transcript as the labelling screen cuts it: math ranges (a step label never splits a
 * formula), where a step label still sits, and the sub-question a passage lies in. Offsets
 * count Unicode code points (`chars` is Array.from(transcript)), as the server does. Pure. */

// Math in the transcript: $$..$$, $..$, \[..\], \(..\) as KaTeX auto-render finds them.
export function mathRanges(chars) {
  const ranges = [], n = chars.length;
  function find(from, closing) {
    for (let j = from; j <= n - closing.length; j++) {
      if (chars[j] === "\\" && closing !== "\\)" && closing !== "\\]") { j++; continue; }
      if (chars.slice(j, j + closing.length).join("") === closing) return j;
    }
    return -1;
  }
  let i = 0;
  while (i < n) {
    const two = chars[i] + (chars[i + 1] || "");
    let close = null, open = 0;
    if (two === "$$") { close = "$$"; open = 2; }
    else if (two === "\\[") { close = "\\]"; open = 2; }
    else if (two === "\\(") { close = "\\)"; open = 2; }
    else if (two === "\\$") { i += 2; continue; }
    else if (chars[i] === "$") { close = "$"; open = 1; }
    if (close) {
      const end = find(i + open, close);
      if (end > i) { ranges.push([i, end + close.length]); i = end + close.length; continue; }
    }
    i++;
  }
  return ranges;
}

// An offset inside a formula moves to the formula's start or end.
export function snap(ranges, offset, side) {
  for (const [start, end] of ranges) {
    if (offset > start && offset < end) return side === "start" ? start : end;
  }
  return offset;
}

// A step label is drawn only where its quote still is; one a correction moved away
// (needs_review) is listed, not painted over unrelated text.
export function placed(chars, step) {
  return !step.needs_review && step.end <= chars.length &&
    (!step.quote || chars.slice(step.start, step.end).join("") === step.quote);
}

// The quoted passage of a step label, cut after about 160 characters but never inside a
// formula (an unpaired $ would show raw TeX instead of rendered math).
export function stepQuote(chars, ranges, step) {
  let end = step.end;
  if (end - step.start > 160) end = Math.max(step.start, snap(ranges, step.start + 160, "start"));
  const quote = chars.slice(step.start, end).join("");
  return end < step.end ? quote + "…" : quote;
}

// The sub-question a passage lies in: the last sub-question marker such as "(2)" written at
// or before its start (not inside a formula), else "".
export function subQuestionAt(chars, ranges, groups, start) {
  const text = chars.slice(0, Math.min(chars.length, start + 6)).join("");
  let best = "", bestAt = -1;
  groups.forEach((g) => {
    if (!g.label) return;
    const inner = g.label.replace(/^[(（]|[)）]$/g, "");
    const pattern = new RegExp("(^|[^\\w$])[(（]" + inner.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + "[)）]", "g");
    let match;
    while ((match = pattern.exec(text)) !== null) {
      const at = match.index + match[1].length;
      if (at <= start && at > bestAt && snap(ranges, at, "start") === at) { bestAt = at; best = g.label; }
      pattern.lastIndex = match.index + 1;
    }
  });
  return best;
}
