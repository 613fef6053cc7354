/* Every sentence the labelling screen's scripts show, in one place, through the JavaScript
 * catalogue (/i18n/js/, loaded by base.html before any page script: window.gettext,
 * ngettext and interpolate; app.js gives English stand-ins when it is missing).
 * Data (student text, rubric labels) never comes through here. */
const gettext = (text) => window.gettext(text);
const ngettext = (singular, plural, n) => window.ngettext(singular, plural, n);
const fill = (format, args) => window.interpolate(format, args);

export const MARK_NAMES = { reached: gettext("reached"), partly: gettext("partly reached"), not_reached: gettext("not reached") };

export const T = {
  notNumber: gettext("Not a number with at most 2 decimals."),
  atMost: (max) => fill(gettext("At most %s points."), [max]),
  totalTooHigh: gettext("The total exceeds the full score."),
  total: gettext("Total"),
  pointsFor: (label) => (label ? fill(gettext("Points for %s"), [label]) : gettext("Points for the answer")),
  // What a step is worth (what it adds to the steps before it), then the points reached with it;
  // "1 pt", "0.5 pts", "2 pts" (the plural follows what the step is worth).
  step: (n, worth, reached, outOf) => (outOf === null
    ? fill(ngettext("Step %s: %s pt, reaching it %s", "Step %s: %s pts, reaching it %s", worth), [n, worth, reached])
    : fill(ngettext("Step %s: %s pt, reaching it %s of %s", "Step %s: %s pts, reaching it %s of %s", worth),
      [n, worth, reached, outOf])),
  rubricGives: (low) => fill(gettext("rubric gives %s"), [low]),
  rubricRange: (low, high, open) => (open ? fill(gettext("rubric gives %s–%s (excl.)"), [low, high])
    : fill(gettext("rubric gives %s–%s"), [low, high])),
  differs: gettext("Differs from the rubric: give a reason below."),
  // The points the rubric's marks allow, in words (a "partly" mark leaves its own points out).
  rangeExactly: (low) => fill(gettext("the marks give exactly %s points"), [low]),
  rangeOpen: (low, high) => fill(gettext("the marks give at least %s and less than %s points"), [low, high]),
  rangeClosed: (low, high) => fill(gettext("the marks give %s to %s points"), [low, high]),
  outside: (points, range) => fill(gettext("%s points is outside what the marks give (%s): say why in “Reason for overriding the rubric” below."), [points, range]),
  needsReview: gettext("needs review"),
  needsReviewTitle: gettext("The transcript was corrected: this text is gone or occurs several times. Select the passage again, then remove this one."),
  removeStep: gettext("Remove (Delete)"),
  selectFirst: gettext("Select a passage of the student answer first, then press e."),
  selectWrongFirst: gettext("Select the wrong passage of the student answer first, then press t."),
  passageSelected: gettext("Passage selected: press e to label it."),
  flagFailed: gettext("Could not send the flag."),
  flagNetwork: gettext("Could not send the flag: the network failed. Try again."),
  flagSent: (quote) => fill(gettext("Sent back to the correction queue: “%s”."), [quote]),
  editing: gettext("Editing… (draft saves itself)"),
  draftKept: (time, version) => (version ? fill(gettext("Draft kept %s · saved version %s"), [time, version])
    : fill(gettext("Draft kept %s"), [time])),
  draftNotKept: (status) => fill(gettext("The draft was not kept (%s); it stays in this browser."), [status]),
  draftOffline: gettext("Offline: the draft stays in this browser until the server answers."),
  needReason: gettext("The points differ from what the marked checkpoints give: write the reason (o), then submit."),
  submitting: gettext("Submitting…"),
  saving: gettext("Saving…"),
  saved: (submit, version, time) => (submit ? fill(gettext("Submitted version %s at %s"), [version, time])
    : fill(gettext("Saved version %s at %s"), [version, time])),
  staleNotSaved: gettext("Not saved: someone saved this label meanwhile. Compare below."),
  fixMarked: gettext("Not saved: fix what is marked."),
  serverAnswered: (status) => fill(gettext("The server answered %s."), [status]),
  notSaved: gettext("Not saved."),
  noConnection: gettext("Not saved: no connection. Your draft stays in this browser; try again."),
  checkpointsMarked: gettext("Checkpoints marked"),
  stepLabels: gettext("Step labels"),
  comment: gettext("Comment"),
  overrideReason: gettext("Override reason"),
  conflictTitle: gettext("Not saved: this label changed since you loaded it"),
  yours: (version) => fill(gettext("Yours (from version %s)"), [version]),
  theirs: (version, by) => fill(gettext("Saved: version %s by %s"), [version, by || "?"]),
  savedColumn: gettext("Saved"),
  keepMine: (version) => fill(gettext("Save mine over version %s"), [version]),
  takeTheirs: gettext("Take the saved version"),
  loaded: (version) => fill(gettext("Loaded version %s."), [version]),
  restored: (when, where) => fill(gettext("Unsaved changes from %s are back (kept in %s): save or submit to keep them in the label."), [when, where]),
  restoredOlder: (base, now) => " " + fill(gettext("It started from version %s; the label is now at version %s: saving will show both to compare."), [base, now]),
  thisBrowser: gettext("this browser"),
  theServer: gettext("the server")
};
