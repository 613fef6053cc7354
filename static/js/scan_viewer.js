/* The one scan viewer: a page image in a fixed frame, with zoom, pan and boxes drawn on it in
 * the image's own pixels. Used by the correction screen (static/js/ocr_correct.js) and by the
 * labelling and adjudication screens (static/js/scan_pages.js). An ES module.
 *
 * Gestures and keys, the same on every screen (docs/labelling.md, docs/ocr.md):
 *   drag (mouse, pen, one finger)   pan
 *   wheel / two-finger scroll       pan; at the image's edge the page scrolls on
 *   Ctrl+wheel, trackpad or touch pinch   zoom at the pointer
 *   + or =, -                        zoom in / out (x1.25), around the frame's centre
 *   f                                fit: the whole page in the frame
 *   v, V                             next / previous page (where a response has several)
 * Single keys work outside text fields; with Alt held (Alt+=, Alt+-, Alt+F, Alt+V) they work
 * from a text field too, e.g. the correction screen's transcript.
 *
 * Markup: a frame element (overflow hidden, its size from CSS) holding a stage element
 * (position absolute, transform-origin 0 0) that holds the image and box layers. Box borders
 * keep their width on screen through the CSS variable --scan-scale set on the stage.
 */

export const ZOOM_STEP = 1.25;
export const WHEEL_STEP = 1.1;  // per wheel notch (100 px of deltaY) with Ctrl, and pinches alike
export const MIN_SCALE = 0.1;
export const MAX_SCALE = 8;

const clamp = (value, low, high) => Math.min(high, Math.max(low, value));

export class ScanViewer {
  /* frame, stage: elements; options: {zoomLabel, keysOff: () => bool, onPage: (delta) => void,
   * autoHeight: the frame is as tall as the page at its width (its CSS max-height caps it)} */
  constructor(frame, stage, options) {
    this.frame = frame;
    this.stage = stage;
    this.options = options || {};
    this.width = 0;
    this.height = 0;
    this.view = { scale: 1, x: 0, y: 0 };
    this.fitted = true;  // follows the frame's size until the person zooms or pans
    this.wirePointer();
    this.wireWheel();
    window.addEventListener("resize", () => {
      if (this.options.autoHeight) this.sizeFrame();
      if (this.fitted) this.fit();
    });
  }

  sizeFrame() {
    if (!this.width || !this.height) return;
    this.frame.style.height = Math.round(this.frame.clientWidth * this.height / this.width) + "px";
  }

  // The page image's size in pixels (what box coordinates are in); shows it whole.
  setPage(width, height) {
    this.width = width;
    this.height = height;
    this.stage.style.width = width + "px";
    this.stage.style.height = height + "px";
    if (this.options.autoHeight) this.sizeFrame();
    this.fit();
  }

  apply() {
    const v = this.view;
    this.stage.style.transform = "translate(" + v.x + "px," + v.y + "px) scale(" + v.scale + ")";
    this.stage.style.setProperty("--scan-scale", String(v.scale));
    if (this.options.zoomLabel) this.options.zoomLabel.textContent = Math.round(v.scale * 100) + "%";
  }

  fit() {
    if (!this.width || !this.height) return;
    const w = this.frame.clientWidth, h = this.frame.clientHeight;
    const s = Math.min(w / this.width, h / this.height);
    this.view = { scale: s, x: (w - this.width * s) / 2, y: Math.max(0, (h - this.height * s) / 2) };
    this.fitted = true;
    this.apply();
  }

  // Zoom by `factor` keeping the frame point (cx, cy) still (the frame's centre by default).
  zoomBy(factor, cx, cy) {
    const v = this.view, next = clamp(v.scale * factor, MIN_SCALE, MAX_SCALE);
    if (cx === undefined) { cx = this.frame.clientWidth / 2; cy = this.frame.clientHeight / 2; }
    v.x = cx - (cx - v.x) * (next / v.scale);
    v.y = cy - (cy - v.y) * (next / v.scale);
    v.scale = next;
    this.fitted = false;
    this.apply();
  }

  // Pan by (dx, dy) frame pixels. `bounded`: only while the image reaches past the frame's edge
  // in that direction (the wheel), so a page that fits does not move and the page scrolls on.
  // Returns whether the image moved.
  panBy(dx, dy, bounded) {
    const v = this.view, before = [v.x, v.y];
    if (bounded) {
      const axis = (pos, delta, frameSize, size) => {
        const low = Math.min(frameSize - size * v.scale, pos), high = Math.max(0, pos);
        return clamp(pos + delta, low, high);
      };
      v.x = axis(v.x, dx, this.frame.clientWidth, this.width);
      v.y = axis(v.y, dy, this.frame.clientHeight, this.height);
    } else {
      v.x += dx;
      v.y += dy;
    }
    const moved = Math.abs(v.x - before[0]) > 0.01 || Math.abs(v.y - before[1]) > 0.01;
    if (moved) { this.fitted = false; this.apply(); }
    return moved;
  }

  // Bring a box [x0, y0, x1, y1] (image pixels) into view, centred, when it is not wholly in
  // view; zoom to `minScale` first when the view is much smaller (a single character).
  reveal(box, minScale) {
    const v = this.view;
    let zoomed = false;
    if (minScale && v.scale < 0.8 * minScale) { v.scale = minScale; zoomed = true; }
    const w = this.frame.clientWidth, h = this.frame.clientHeight;
    const left = v.x + box[0] * v.scale, top = v.y + box[1] * v.scale;
    const right = v.x + box[2] * v.scale, bottom = v.y + box[3] * v.scale;
    if (zoomed || left < 0 || top < 0 || right > w || bottom > h) {
      v.x = w / 2 - (box[0] + box[2]) / 2 * v.scale;
      v.y = h / 2 - (box[1] + box[3]) / 2 * v.scale;
      this.fitted = false;
    }
    this.apply();
  }

  wirePointer() {
    const frame = this.frame, pointers = new Map();
    let pinch = null;
    const spread = () => {
      const [a, b] = [...pointers.values()];
      return { d: Math.hypot(a.x - b.x, a.y - b.y), x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
    };
    frame.addEventListener("pointerdown", (e) => {
      if (e.pointerType === "mouse" && e.button !== 0) return;
      frame.setPointerCapture(e.pointerId);
      pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
      pinch = pointers.size === 2 ? spread() : null;
      frame.classList.add("dragging");
    });
    frame.addEventListener("pointermove", (e) => {
      const last = pointers.get(e.pointerId);
      if (!last) return;
      if (pointers.size === 1) {
        this.panBy(e.clientX - last.x, e.clientY - last.y, false);
        pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
        return;
      }
      pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
      if (pointers.size === 2 && pinch) {
        const now = spread(), r = frame.getBoundingClientRect();
        if (pinch.d > 0) this.zoomBy(now.d / pinch.d, now.x - r.left, now.y - r.top);
        this.panBy(now.x - pinch.x, now.y - pinch.y, false);
        pinch = now;
      }
    });
    const end = (e) => {
      pointers.delete(e.pointerId);
      pinch = pointers.size === 2 ? spread() : null;
      if (!pointers.size) frame.classList.remove("dragging");
    };
    frame.addEventListener("pointerup", end);
    frame.addEventListener("pointercancel", end);
  }

  wireWheel() {
    this.frame.addEventListener("wheel", (e) => {
      const unit = e.deltaMode === 1 ? 33 : e.deltaMode === 2 ? this.frame.clientHeight : 1;
      if (e.ctrlKey) {  // a mouse wheel with Ctrl, and trackpad pinches (sent as Ctrl+wheel)
        e.preventDefault();
        const r = this.frame.getBoundingClientRect();
        this.zoomBy(Math.pow(WHEEL_STEP, -clamp(e.deltaY * unit, -300, 300) / 100), e.clientX - r.left, e.clientY - r.top);
        return;
      }
      if (this.panBy(-e.deltaX * unit, -e.deltaY * unit, true)) e.preventDefault();
    }, { passive: false });
  }

  // The viewer's keys (see the top of this file); returns whether the key was taken.
  handleKey(e) {
    if (e.ctrlKey || e.metaKey) return false;
    const keysOff = this.options.keysOff && this.options.keysOff();
    let action = null;
    if (e.altKey) {
      action = { Equal: "in", NumpadAdd: "in", Minus: "out", NumpadSubtract: "out", KeyF: "fit", KeyV: "page" }[e.code];
    } else if (!keysOff && !(window.RealMath && window.RealMath.isTyping(e.target))) {
      action = { "+": "in", "=": "in", "-": "out", f: "fit", v: "page", V: "page" }[e.key];
    }
    if (!action || (action === "page" && !this.options.onPage)) return false;
    if (action === "in") this.zoomBy(ZOOM_STEP);
    else if (action === "out") this.zoomBy(1 / ZOOM_STEP);
    else if (action === "fit") this.fit();
    else this.options.onPage(e.shiftKey ? -1 : 1);
    e.preventDefault();
    return true;
  }

  bindKeys() {
    document.addEventListener("keydown", (e) => { this.handleKey(e); });
    return this;
  }

  // Buttons: elements with data-scan="zoom-in" | "zoom-out" | "fit" inside `root`.
  bindButtons(root) {
    root.querySelectorAll("[data-scan]").forEach((b) => {
      const what = b.getAttribute("data-scan");
      b.addEventListener("click", () => {
        if (what === "zoom-in") this.zoomBy(ZOOM_STEP);
        else if (what === "zoom-out") this.zoomBy(1 / ZOOM_STEP);
        else if (what === "fit") this.fit();
      });
    });
    return this;
  }
}

// Draw boxes [{box: [x0, y0, x1, y1], pad}] into `layer` (inside the stage) as divs of a class.
export function drawBoxes(layer, boxes, className) {
  layer.textContent = "";
  boxes.forEach(({ box, pad }) => {
    const d = document.createElement("div"), p = pad || 0;
    d.className = className;
    placeBox(d, box, p);
    layer.appendChild(d);
  });
}

// Put one element over a box (image pixels, `pad` around it) through CSSOM.
export function placeBox(element, box, pad) {
  const p = pad || 0;
  element.style.left = (box[0] - p) + "px";
  element.style.top = (box[1] - p) + "px";
  element.style.width = (box[2] - box[0] + 2 * p) + "px";
  element.style.height = (box[3] - box[1] + 2 * p) + "px";
}
