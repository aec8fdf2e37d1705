// flurry dashboard: polls IDService/Info every second and renders the namespaces,
// with a chart per namespace of its rate and runway over the last minutes (kept in
// the page, drawn as SVG); issues and decodes IDs on request. Talks Connect's JSON
// protocol to the same origin; no libraries, no build step.
'use strict';

(function () {
  const API = '/flurry.v1.IDService/';
  const POLL_MS = 1000;
  const TIMEOUT_MS = 5000;
  const TOKEN_KEY = 'flurry.token';

  const $ = (id) => document.getElementById(id);

  // ---- calls -------------------------------------------------------------

  class CallError extends Error {
    constructor(code, message, network) {
      super(message);
      this.code = code;
      this.network = !!network;
    }
    // One line for people: "unauthenticated: token required for namespace x".
    line() {
      return this.code ? this.code.replace(/_/g, ' ') + ': ' + this.message : this.message;
    }
  }

  function token() {
    try { return sessionStorage.getItem(TOKEN_KEY) || ''; } catch (_) { return $('token').value.trim(); }
  }

  // The server's clock as far as the page can tell. Every answer's Date header
  // (whole seconds, written between sending and receiving) bounds the offset of
  // the server's clock from this one; the bounds of all answers so far are
  // intersected, and started again when they stop overlapping (a clock was set).
  // Some polls in, the estimate is good to a few milliseconds plus the round trip,
  // which the lease's mark (a few seconds ahead) needs and a browser on another
  // machine may not give.
  const skew = { lo: -Infinity, hi: Infinity };
  function observeDate(sent, got, header) {
    const d = Date.parse(header || '');
    if (Number.isNaN(d)) return;
    const lo = d - got, hi = d + 1000 - sent;
    if (Math.max(lo, skew.lo) > Math.min(hi, skew.hi)) {
      skew.lo = lo;
      skew.hi = hi;
      return;
    }
    skew.lo = Math.max(lo, skew.lo);
    skew.hi = Math.min(hi, skew.hi);
  }
  function serverNow(ms) { return Number.isFinite(skew.lo) ? ms + (skew.lo + skew.hi) / 2 : ms; }

  async function call(method, body) {
    const headers = { 'Content-Type': 'application/json', 'Connect-Protocol-Version': '1' };
    const tok = token();
    if (tok) headers['Authorization'] = 'Bearer ' + tok;
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), TIMEOUT_MS);
    let res;
    const sent = Date.now();
    try {
      res = await fetch(API + method, {
        method: 'POST', headers, body: JSON.stringify(body || {}),
        signal: ctl.signal, cache: 'no-store', credentials: 'omit',
      });
      observeDate(sent, Date.now(), res.headers.get('Date'));
    } catch (e) {
      throw new CallError('', ctl.signal.aborted
        ? 'the server did not answer within ' + TIMEOUT_MS / 1000 + ' s'
        : 'cannot reach the server', true);
    } finally {
      clearTimeout(timer);
    }
    let data = null;
    try { data = await res.json(); } catch (_) { /* not JSON: a proxy's error page */ }
    if (!res.ok) {
      if (data && data.code) throw new CallError(data.code, oneLine(data.message || res.statusText));
      // No Connect error body: the server (or a proxy in front of it) is not serving the API.
      throw new CallError('HTTP ' + res.status, oneLine(res.statusText || 'error'), res.status >= 502);
    }
    return data || {};
  }

  function oneLine(s) { return String(s).replace(/\s+/g, ' ').trim(); }

  // ---- formatting ----------------------------------------------------------

  const nf = new Intl.NumberFormat('en-US');
  const nf1 = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

  function int(s) { // int64 as a protojson string (or absent) -> grouped digits
    if (s === undefined || s === null || s === '') return '0';
    try { return BigInt(s).toLocaleString('en-US'); } catch (_) { return String(s); }
  }
  function num(s) { const n = Number(s); return Number.isFinite(n) ? n : 0; }

  function rate(perSec) {
    if (!Number.isFinite(perSec)) return '—';
    if (perSec >= 1e6) return nf1.format(perSec / 1e6) + ' M/s';
    if (perSec >= 1e4) return nf1.format(perSec / 1e3) + ' k/s';
    return (perSec < 10 ? nf1 : nf).format(perSec) + ' /s';
  }

  // A span of seconds for people: "850 ms", "12.5 s", "4 min 10 s", "3 h 5 min",
  // "12 d 4 h", "54 y 3 mo".
  function span(sec) {
    sec = Math.abs(sec);
    if (sec < 1) return Math.round(sec * 1000) + ' ms';
    if (sec < 60) return nf1.format(sec) + ' s';
    const m = Math.floor(sec / 60), h = Math.floor(sec / 3600), d = Math.floor(sec / 86400);
    if (sec < 3600) return m + ' min ' + Math.floor(sec % 60) + ' s';
    if (sec < 86400) return h + ' h ' + Math.floor((sec % 3600) / 60) + ' min';
    const year = 365.25 * 86400;
    if (sec < year) return d + ' d ' + Math.floor((sec % 86400) / 3600) + ' h';
    const y = Math.floor(sec / year), mo = Math.floor((sec % year) / (year / 12));
    return y + ' y ' + mo + ' mo';
  }

  // How long a segment's buffer lasts; the server reports 0 while it has no rate
  // (no range used up yet).
  function runway(sg, short) {
    if (num(sg.buffered) === 0) return short ? 'empty' : 'none: buffer empty';
    const r = num(sg.runwaySeconds);
    if (num(sg.rate) > 0 || r > 0) return span(r);
    return short ? 'idle' : 'no demand yet';
  }

  // compact writes a number for an axis: 950, 12k, 1.2M, 3.4G.
  function compact(n) {
    const a = Math.abs(n);
    if (a >= 1e9) return nf1.format(n / 1e9) + 'G';
    if (a >= 1e6) return nf1.format(n / 1e6) + 'M';
    if (a >= 1e3) return nf1.format(n / 1e3) + 'k';
    return nf1.format(n);
  }

  function clockTime(d) { return d.toLocaleTimeString('en-GB', { hour12: false }); }

  function fields(list) {
    return (list || []).map((f) => f.name + '=' + (f.value || '0')).join(', ');
  }

  // ---- history and charts --------------------------------------------------

  // Each card keeps what the page saw of its namespace over the last HISTORY_MS:
  // a sample per poll ({t, rate, runway}, NaN where unknown, t from
  // performance.now()) and a gap mark ({t, gap: true}) per failed poll. Bounded:
  // older entries go at every poll, and never more than HISTORY_MAX are kept (a
  // poll a second makes 600; a token typed in adds a few), so a namespace costs at
  // most HISTORY_MAX small objects. Nothing is kept across a reload: for longer
  // history, scrape /metrics (deploy/grafana).
  const HISTORY_MS = 10 * 60 * 1000;
  const HISTORY_MAX = 1200;
  // Two samples further apart than a poll and its time-out are not joined by a
  // line (the tab was hidden, or a poll hung).
  const GAP_MS = POLL_MS + TIMEOUT_MS + 500;
  const SVG = 'http://www.w3.org/2000/svg';

  function remember(c, entry) {
    const h = c.hist;
    h.push(entry);
    let drop = 0;
    while (drop < h.length - 1 && (h.length - drop > HISTORY_MAX || entry.t - h[drop].t > HISTORY_MS)) drop++;
    if (drop) h.splice(0, drop);
  }

  // runwayOf says what the namespace runs out of next and how long that lasts, in
  // seconds (NaN while unknown): a segment namespace's buffer at the current
  // demand; a leased snowflake's reserved window (its high-water mark ahead of the
  // server's clock: how long it issues with its lease store gone); else the
  // layout's time field. null for a strategy with none of these.
  function runwayOf(ns, nowMs) {
    const sg = ns.segment, l = ns.layout, ls = ns.lease;
    if (sg && (sg.tag || sg.step) && !(l && l.text)) {
      let sec = NaN;
      if (num(sg.buffered) === 0) sec = 0;
      else if (num(sg.rate) > 0 || num(sg.runwaySeconds) > 0) sec = num(sg.runwaySeconds);
      return { what: 'segment buffer', title: 'how long the buffered IDs last at the current demand', sec };
    }
    if (ls && (ls.store || ls.state)) {
      const t = Date.parse(ls.mark || '');
      return {
        what: 'lease window', title: 'how long the namespace may issue without another write to its lease store (high-water mark minus now)',
        sec: Number.isNaN(t) ? NaN : Math.max(0, (t - serverNow(nowMs)) / 1000),
      };
    }
    if (l && l.text) {
      return { what: 'time field', title: 'how long until the layout\'s time field runs out', sec: num(l.lifeLeftSeconds) };
    }
    return null;
  }

  // Runway units: the largest that the top of the axis holds at least twice.
  const UNITS = [[1, 's'], [60, 'min'], [3600, 'h'], [86400, 'd'], [365.25 * 86400, 'y']];
  function unitFor(maxSec) {
    let u = UNITS[0];
    for (const x of UNITS) if (maxSec >= 2 * x[0]) u = x;
    return u;
  }

  // niceTop is the top of an axis: 1, 2, 2.5 or 5 times a power of ten, at least v.
  function niceTop(v) {
    if (!(v > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 2.5, 5]) if (v <= m * p * (1 + 1e-9)) return m * p;
    return 10 * p;
  }

  function svgEl(parent, name, attrs, text) {
    const el = document.createElementNS(SVG, name);
    for (const k in attrs) el.setAttribute(k, attrs[k]);
    if (text !== undefined) el.textContent = text;
    parent.appendChild(el);
    return el;
  }

  // plot draws one series of a card's history into box (a div) as an SVG as wide
  // as the box: the last win ms up to now, value(entry) on the y axis from 0,
  // labelled by fmt. Lines break at gap marks, unknown values and holes longer
  // than GAP_MS; a point with no neighbour is a dot; a failed poll's stretch is a
  // shaded band. What it drew is in the SVG's data attributes (points, runs,
  // gaps, peak, low, last) for tests and for the readout.
  function plot(box, hist, now, win, value, fmt, label) {
    const W = Math.max(160, Math.round(box.clientWidth || 320));
    const H = 92, left = 56, right = 8, top = 8, bottom = 20;
    const pw = W - left - right, ph = H - top - bottom;
    const t0 = now - win;
    let peak = -Infinity, low = Infinity, last = NaN, points = 0;
    for (const e of hist) {
      if (e.gap || e.t < t0) continue;
      const v = value(e);
      if (!Number.isFinite(v)) continue;
      peak = Math.max(peak, v);
      low = Math.min(low, v);
      last = v;
      points++;
    }
    const axis = fmt.axis(points ? peak : 0);
    const x = (t) => left + pw * (t - t0) / win;
    const y = (v) => top + ph * (1 - Math.min(v, axis.top) / axis.top);

    const svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
    svg.setAttribute('width', W);
    svg.setAttribute('height', H);
    svg.setAttribute('role', 'img');
    // Horizontal grid and y labels: 0, half, top.
    for (const f of [0, 0.5, 1]) {
      const v = axis.top * f, yy = y(v);
      svgEl(svg, 'line', { class: 'grid', x1: left, x2: W - right, y1: yy, y2: yy });
      svgEl(svg, 'text', { class: 'ylab', x: left - 5, y: yy + 3.5, 'text-anchor': 'end' }, axis.label(v));
    }
    // Time ticks back from now, as many as fit.
    const fit = Math.max(2, Math.floor(pw / 64));
    let step = 600000;
    for (const s of [10000, 15000, 30000, 60000, 120000, 300000]) {
      if (win / s <= fit) { step = s; break; }
    }
    for (let back = 0; back <= win + 1; back += step) {
      const xx = x(now - back);
      svgEl(svg, 'line', { class: 'tick', x1: xx, x2: xx, y1: top + ph, y2: top + ph + 4 });
      const text = back === 0 ? 'now' : '\u2212' + (step < 60000 ? back / 1000 + ' s' : back / 60000 + ' min');
      svgEl(svg, 'text', { class: 'xlab', x: xx, y: H - 4, 'text-anchor': back === 0 ? 'end' : (Math.abs(back - win) < 1 ? 'start' : 'middle') }, text);
    }
    // Bands where polls failed: from the last answer before to the first after.
    let gaps = 0, bandFrom = NaN, prevT = NaN;
    const band = (a, b) => {
      const xa = x(Math.max(a, t0)), xb = x(Math.min(b, now));
      if (xb > xa) svgEl(svg, 'rect', { class: 'gap', x: xa, y: top, width: Math.max(1, xb - xa), height: ph });
      gaps++;
    };
    for (const e of hist) {
      if (e.gap) {
        if (Number.isNaN(bandFrom)) bandFrom = Number.isNaN(prevT) ? e.t : prevT;
        continue;
      }
      if (!Number.isNaN(bandFrom)) { if (e.t >= t0) band(bandFrom, e.t); bandFrom = NaN; }
      prevT = e.t;
    }
    if (!Number.isNaN(bandFrom)) band(bandFrom, now);
    // The series: runs of known values with no gap between them.
    let runs = 0, d = '', run = [], prev = null;
    const flush = () => {
      if (run.length === 1) svgEl(svg, 'circle', { class: 'dot', cx: run[0][0], cy: run[0][1], r: 2.2 });
      else if (run.length > 1) d += 'M' + run.map((p) => p[0].toFixed(1) + ' ' + p[1].toFixed(1)).join('L');
      if (run.length) runs++;
      run = [];
    };
    for (const e of hist) {
      const v = e.gap ? NaN : value(e);
      if (!Number.isFinite(v) || e.t < t0 || (prev && e.t - prev.t > GAP_MS)) flush();
      if (!e.gap) prev = e;
      if (Number.isFinite(v) && e.t >= t0) run.push([x(e.t), y(v)]);
    }
    flush();
    if (d) svgEl(svg, 'path', { class: 'line', d });
    svgEl(svg, 'line', { class: 'axis', x1: left, x2: W - right, y1: top + ph, y2: top + ph });

    const ds = svg.dataset;
    ds.points = points;
    ds.runs = runs;
    ds.gaps = gaps;
    ds.peak = points ? peak : '';
    ds.low = points ? low : '';
    ds.last = Number.isFinite(last) ? last : '';
    svg.setAttribute('aria-label', label);
    box.replaceChildren(svg);
    return { points, peak, low, last };
  }

  const rateFmt = {
    axis(peak) {
      const top = niceTop(peak);
      return { top, label: (v) => compact(v) + '/s' };
    },
  };
  function runwayFmt(peak) {
    const top0 = peak > 0 ? peak : 1;
    const [size, name] = unitFor(top0);
    const top = niceTop(top0 / size) * size;
    return { top, label: (v) => (v === 0 ? '0' : nf1.format(v / size) + ' ' + name) };
  }

  function spanText(ms) {
    const min = Math.round(ms / 60000);
    return min <= 1 ? 'minute' : min + ' minutes';
  }

  // drawChart redraws a card's chart from its history (after a poll, a failed
  // poll, or a change of width).
  function drawChart(c) {
    const p = c.parts;
    if (p.chart.hidden || !c.hist.length) return;
    const now = performance.now();
    // The window grows with the history, a minute at a time, up to HISTORY_MS.
    const have = now - c.hist[0].t;
    const win = Math.min(HISTORY_MS, Math.max(60000, Math.ceil(have / 60000) * 60000));
    setText(p.chartSpan, spanText(win));
    const r = plot(p.ratePlot, c.hist, now, win, (e) => e.rate, rateFmt,
      'IDs per second over the last ' + spanText(win));
    const stale = c.el.classList.contains('stale');
    setText(p.rateNow, 'now ' + (Number.isFinite(c.rate) && !stale ? rate(c.rate) : '—') +
      (r.points ? ' · peak ' + rate(r.peak) : ''));
    const rw = c.runway;
    p.runwayPanel.hidden = !rw;
    if (rw) {
      setText(p.runwayTitle, 'Runway: ' + rw.what);
      p.runwayTitle.title = rw.title;
      const w = plot(p.runwayPlot, c.hist, now, win, (e) => e.runway, { axis: runwayFmt },
        'Runway (' + rw.what + ') over the last ' + spanText(win));
      const fmt = (sec) => (sec > 0 ? span(sec) : '0');
      let cur = 'now ' + (Number.isFinite(rw.sec) && !stale ? fmt(rw.sec) : '—');
      if (rw.what === 'segment buffer' && !Number.isFinite(rw.sec) && !stale) cur = 'no demand yet';
      setText(p.runwayNow, cur + (w.points ? ' · low ' + fmt(w.low) : ''));
    }
  }

  const resized = typeof ResizeObserver === 'function'
    ? new ResizeObserver((list) => {
      for (const e of list) {
        const c = cards.get(e.target.closest('.card').dataset.namespace);
        if (c && Math.round(e.contentRect.width) !== c.chartW) {
          c.chartW = Math.round(e.contentRect.width);
          drawChart(c);
        }
      }
    })
    : null;

  // ---- rendering -----------------------------------------------------------

  const cards = new Map(); // namespace name -> {el, parts, prev: {issued, at}}
  let lastOK = null;

  // setRows makes dl show rows [[label, value, cls?]], reusing its elements so that
  // a poll changes only the text that changed (and a selection survives).
  function setRows(dl, rows) {
    const want = rows.length * 2;
    while (dl.children.length > want) dl.lastChild.remove();
    rows.forEach(([label, value, cls], i) => {
      let dt = dl.children[2 * i], dd = dl.children[2 * i + 1];
      if (!dt) {
        dt = dl.appendChild(document.createElement('dt'));
        dd = dl.appendChild(document.createElement('dd'));
      }
      if (dt.textContent !== label) dt.textContent = label;
      const key = label.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
      if (dd.dataset.key !== key) dd.dataset.key = key;
      if (dd.textContent !== value) dd.textContent = value;
      const c = cls || '';
      if (dd.className !== c) dd.className = c;
    });
  }

  function setText(el, s) { if (el.textContent !== s) el.textContent = s; }

  function pill(el, text, kind) {
    setText(el, text);
    const c = el.className.replace(/\b(ok|bad|warn)\b/g, '').trim() + (kind ? ' ' + kind : '');
    if (el.className !== c) el.className = c;
  }

  function card(name) {
    let c = cards.get(name);
    if (c) return c;
    const el = $('ns-card').content.firstElementChild.cloneNode(true);
    el.id = 'ns-' + name;
    el.dataset.namespace = name;
    const q = (s) => el.querySelector(s);
    const parts = {
      name: q('.ns-name'), strategy: q('.strategy'), token: q('.token-pill'), ready: q('.ready'),
      reason: q('.reason'), issued: q('.issued'), rate: q('.rate'), life: q('.life'), lifeLabel: q('.life-label'),
      layoutSec: q('.layout-sec'), leaseSec: q('.lease-sec'), segmentSec: q('.segment-sec'),
      chart: q('.chart'), chartSpan: q('.chart-span'), ratePlot: q('.rate-plot'), rateNow: q('.rate-panel .chart-now'),
      runwayPanel: q('.runway-panel'), runwayTitle: q('.runway-panel .chart-title'),
      runwayPlot: q('.runway-plot'), runwayNow: q('.runway-panel .chart-now'),
    };
    parts.name.textContent = name;
    el.setAttribute('aria-labelledby', (parts.name.id = 'ns-h-' + name));
    c = { el, parts, prev: null, rate: NaN, hist: [], runway: null, chartW: 0 };
    cards.set(name, c);
    if (resized) resized.observe(parts.chart);
    return c;
  }

  function renderNamespace(ns, now, nowMs) {
    const c = card(ns.name);
    const p = c.parts;
    c.el.classList.remove('stale');
    pill(p.strategy, ns.strategy || 'unknown', '');
    p.token.hidden = !ns.tokenRequired;
    p.token.title = 'Next and Decode need a bearer token';
    if (ns.ready) pill(p.ready, 'ready', 'ok'); else pill(p.ready, 'not ready', 'bad');
    p.reason.hidden = !!ns.ready || !ns.notReadyReason;
    setText(p.reason, ns.ready ? '' : (ns.notReadyReason || ''));

    // A namespace with tokens is described in full only to a caller with one.
    const locked = ns.tokenRequired && !ns.layout && !ns.lease && !ns.segment;
    c.el.classList.toggle('locked', locked);
    if (locked) {
      p.reason.hidden = false;
      setText(p.reason, (ns.ready ? '' : (ns.notReadyReason || 'not ready') + '. ') +
        'Enter this namespace\'s bearer token at the top to see its state.');
      for (const el of [p.issued, p.rate, p.life]) setText(el, '—');
      p.layoutSec.hidden = p.leaseSec.hidden = p.segmentSec.hidden = p.chart.hidden = true;
      c.prev = null;
      c.hist = []; // what it showed with a token is not kept without one
      return c;
    }

    // Rate between two polls, from the issued counter.
    const issued = num(ns.issued);
    if (c.prev && issued >= c.prev.issued && now > c.prev.at) {
      c.rate = (issued - c.prev.issued) / ((now - c.prev.at) / 1000);
    } else {
      c.rate = NaN; // first poll, or the server restarted
    }
    c.prev = { issued, at: now };
    setText(p.issued, int(ns.issued));
    setText(p.rate, rate(c.rate));
    c.runway = runwayOf(ns, nowMs);
    remember(c, { t: now, rate: c.rate, runway: c.runway ? c.runway.sec : NaN });
    p.chart.hidden = false;

    const l = ns.layout;
    const sg = ns.segment;
    if (sg && (sg.tag || sg.step) && !(l && l.text)) {
      // Segment IDs carry no time: what runs out is the buffer.
      setText(p.lifeLabel, 'Runway');
      setText(p.life, runway(sg, true));
      p.life.title = 'how long the buffered IDs last at the current rate';
    } else {
      setText(p.lifeLabel, 'Life left');
    }
    if (l && l.text) {
      const left = num(l.lifeLeftSeconds);
      setText(p.life, left > 0 ? span(left) : 'exhausted');
      p.life.title = l.lifetime ? 'runs out ' + l.lifetime : '';
      const rows = [['Layout', l.text, 'code']];
      if (l.preset) rows.push(['Preset', l.preset]);
      if (l.epoch) rows.push(['Epoch', l.epoch]);
      if (l.lifetime) rows.push(['Runs out', l.lifetime + ' (' + (left > 0 ? 'in ' + span(left) : 'exhausted') + ')', left > 0 ? '' : 'bad']);
      if (l.idsPerSecondPerNode) rows.push(['Cap per node', rate(num(l.idsPerSecondPerNode))]);
      if (l.node && l.node.length) rows.push(['Node', fields(l.node), 'code']);
      setRows(p.layoutSec.querySelector('dl'), rows);
      p.layoutSec.hidden = false;
    } else {
      if (!sg) setText(p.life, '—');
      p.layoutSec.hidden = true;
    }

    const ls = ns.lease;
    if (ls && (ls.store || ls.state)) {
      const rows = [];
      const st = ls.state || 'unknown';
      rows.push(['State', st, st === 'lost' ? 'bad' : '']);
      if (ls.store) rows.push(['Store', ls.store, 'code']);
      if (ls.scope) rows.push(['Scope', ls.scope, 'code']);
      rows.push(['Value', int(ls.value)]);
      if (ls.owner) rows.push(['Owner', ls.owner, 'code']);
      if (ls.mark) {
        rows.push(['Mark', ls.mark, 'code']);
        const t = Date.parse(ls.mark);
        if (!Number.isNaN(t)) {
          const d = (serverNow(nowMs) - t) / 1000;
          rows.push(['Mark age', d >= 0 ? span(d) + ' ago' : 'reserved ' + span(-d) + ' ahead']);
        }
      }
      setRows(p.leaseSec.querySelector('dl'), rows);
      p.leaseSec.hidden = false;
    } else {
      p.leaseSec.hidden = true;
    }

    if (sg && (sg.tag || sg.step)) {
      const rows = [];
      if (sg.tag) rows.push(['Tag', sg.tag, 'code']);
      if (sg.stores && sg.stores.length) rows.push(['Stores', sg.stores.join(', '), 'code']);
      rows.push(['Current range', int(sg.currentFirst) + ' – ' + int(sg.currentLast)]);
      rows.push(['Used of range', int(sg.issued)]);
      rows.push(['Buffered', int(sg.buffered) + (sg.nextReady ? ' (next range ready)' : '')]);
      rows.push(['Runway', runway(sg), num(sg.buffered) === 0 ? 'bad' : '']);
      rows.push(['Demand', num(sg.rate) > 0 ? rate(num(sg.rate)) : 'not measured yet']);
      rows.push(['Step', int(sg.step)]);
      rows.push(['Fetches', int(sg.fetches)]);
      rows.push(['Last error', sg.lastError || 'none', sg.lastError ? 'bad' : '']);
      setRows(p.segmentSec.querySelector('dl'), rows);
      p.segmentSec.hidden = false;
    } else {
      p.segmentSec.hidden = true;
    }
    return c;
  }

  function fillSelect(sel, names) {
    const have = Array.from(sel.options, (o) => o.value);
    if (have.length === names.length && have.every((v, i) => v === names[i])) return;
    const keep = sel.value;
    sel.replaceChildren(...names.map((n) => new Option(n, n)));
    if (names.includes(keep)) sel.value = keep;
  }

  function onInfo(info) {
    const now = performance.now();
    const nowMs = Date.now();
    const list = info.namespaces || [];
    const grid = $('namespaces');
    const seen = new Set();
    list.forEach((ns, i) => {
      seen.add(ns.name);
      const c = renderNamespace(ns, now, nowMs);
      if (grid.children[i] !== c.el) grid.insertBefore(c.el, grid.children[i] || null);
      drawChart(c);
    });
    for (const [name, c] of cards) {
      if (!seen.has(name)) {
        c.el.remove();
        cards.delete(name); // its history goes with it
        if (resized) resized.unobserve(c.parts.chart);
      }
    }
    $('ns-empty').hidden = list.length > 0;
    setText($('ns-empty'), 'This server has no namespaces.');
    const names = list.map((n) => n.name);
    fillSelect($('next-ns'), names);
    fillSelect($('decode-ns'), names);

    const meta = [];
    if (info.version) meta.push('version ' + info.version);
    if (info.started) {
      const t = Date.parse(info.started);
      if (!Number.isNaN(t)) meta.push('up ' + span((nowMs - t) / 1000));
    }
    setText($('server-meta'), meta.join(' · '));
    lastOK = new Date(nowMs);
    setText($('updated'), 'live · updated ' + clockTime(lastOK));
  }

  function setBanner(err) {
    const b = $('banner');
    if (!err) {
      if (!b.hidden) b.hidden = true;
      return;
    }
    let msg = err.network
      ? 'Server unreachable (' + err.line() + '). Retrying every second'
      : 'The server refused Info (' + err.line() + '). Retrying every second';
    msg += lastOK ? '; the state below is from ' + clockTime(lastOK) + '.' : '.';
    setText(b, msg);
    b.hidden = false;
    for (const c of cards.values()) {
      c.el.classList.add('stale');
      pill(c.parts.ready, 'no contact', 'warn');
      c.prev = null; // no rate across the gap
      if (c.hist.length) {
        remember(c, { t: performance.now(), gap: true });
        drawChart(c);
      }
    }
    if (lastOK) setText($('updated'), 'stale · last updated ' + clockTime(lastOK));
    else setText($('ns-empty'), 'Waiting for the server…');
  }

  // ---- polling -------------------------------------------------------------

  // One Info call at a time: a poll asked for while one runs (a new token) runs
  // right after it.
  let timer = 0, inflight = false, rerun = false;
  async function poll() {
    clearTimeout(timer);
    if (inflight) { rerun = true; return; }
    inflight = true;
    try {
      onInfo(await call('Info', {}));
      setBanner(null);
    } catch (e) {
      setBanner(e instanceof CallError ? e : new CallError('', String(e), true));
    } finally {
      inflight = false;
    }
    if (rerun) { rerun = false; poll(); return; }
    timer = setTimeout(tick, POLL_MS);
  }
  function tick() {
    if (document.hidden) return; // resumed by visibilitychange
    poll();
  }
  document.addEventListener('visibilitychange', () => { if (!document.hidden) poll(); });

  // ---- tools ---------------------------------------------------------------

  function status(el, text, kind) {
    setText(el, text);
    el.className = 'status' + (kind ? ' ' + kind : '');
  }

  async function next(ev) {
    ev.preventDefault();
    const st = $('next-status');
    const ns = $('next-ns').value;
    const countEl = $('next-count');
    const count = Number(countEl.value);
    if (!ns) { status(st, 'No namespace to issue from yet.', 'error'); return; }
    if (!Number.isInteger(count) || count < 1 || count > Number(countEl.max)) {
      status(st, 'Count must be a whole number from 1 to ' + nf.format(Number(countEl.max)) + '.', 'error');
      countEl.focus();
      return;
    }
    const btn = $('next-btn');
    btn.disabled = true;
    status(st, 'Issuing…', '');
    try {
      const res = await call('Next', { namespace: ns, count });
      const ids = (res.ids && res.ids.length ? res.ids : res.textIds) || [];
      $('next-ids').value = ids.join('\n');
      $('next-copy').disabled = ids.length === 0;
      $('next-decode').disabled = ids.length === 0;
      status(st, nf.format(ids.length) + (ids.length === 1 ? ' ID' : ' IDs') + ' from ' + ns + ' at ' + clockTime(new Date()) + '.', 'ok');
      $('next-ids').dataset.namespace = ns;
    } catch (e) {
      status(st, errLine(e) + hint(e), 'error');
    } finally {
      btn.disabled = false;
    }
  }

  function errLine(e) {
    return e instanceof CallError ? e.line() : oneLine((e && e.message) || e);
  }

  function hint(e) {
    return e.code === 'unauthenticated' || e.code === 'permission_denied'
      ? ' — enter a bearer token at the top.' : '';
  }

  async function copyIDs() {
    const ta = $('next-ids');
    const st = $('next-status');
    try {
      await navigator.clipboard.writeText(ta.value);
      status(st, 'Copied to the clipboard.', 'ok');
    } catch (_) {
      ta.focus();
      ta.select();
      const ok = document.execCommand && document.execCommand('copy');
      status(st, ok ? 'Copied to the clipboard.' : 'Selected: press Ctrl+C to copy.', ok ? 'ok' : '');
    }
  }

  function decodeFirst() {
    const ta = $('next-ids');
    const first = ta.value.split('\n')[0];
    if (!first) return;
    if (ta.dataset.namespace) $('decode-ns').value = ta.dataset.namespace;
    $('decode-id').value = first;
    $('decode-form').requestSubmit();
  }

  async function decode(ev) {
    ev.preventDefault();
    const st = $('decode-status');
    const out = $('decode-out');
    const ns = $('decode-ns').value;
    const id = $('decode-id').value.trim();
    if (!id) { status(st, 'Enter an ID to decode.', 'error'); out.hidden = true; $('decode-id').focus(); return; }
    if (!ns) { status(st, 'No namespace yet.', 'error'); out.hidden = true; return; }
    $('decode-btn').disabled = true;
    try {
      const d = await call('Decode', { namespace: ns, id });
      const rows = [['ID', d.id || id, 'code']];
      if (d.strategy) rows.push(['Strategy', d.strategy]);
      if (d.time) {
        const age = (Date.now() - Date.parse(d.time)) / 1000;
        rows.push(['Time', d.time, 'code']);
        rows.push(['Age', Number.isNaN(age) ? '—' : (age >= 0 ? span(age) + ' ago' : 'in ' + span(-age))]);
        rows.push(['Unix ms', int(d.unixMs)]);
      } else {
        rows.push(['Time', 'none (segment IDs carry no time)']);
      }
      for (const f of d.fields || []) rows.push([f.name, int(f.value), 'code field']);
      rows.push(['Sequence', int(d.sequence)]);
      setRows(out, rows);
      out.hidden = false;
      status(st, 'Decoded with the layout of ' + (d.namespace || ns) + '.', 'ok');
    } catch (e) {
      out.hidden = true;
      status(st, errLine(e) + hint(e), 'error');
    } finally {
      $('decode-btn').disabled = false;
    }
  }

  // ---- token ---------------------------------------------------------------

  function initToken() {
    const input = $('token');
    input.value = token();
    let again = 0;
    input.addEventListener('input', () => {
      try {
        const v = input.value.trim();
        if (v) sessionStorage.setItem(TOKEN_KEY, v); else sessionStorage.removeItem(TOKEN_KEY);
      } catch (_) { /* storage disabled: token() falls back to the field */ }
      // Show what the new token unlocks without waiting for the next poll.
      clearTimeout(again);
      again = setTimeout(poll, 300);
    });
    $('token-clear').addEventListener('click', () => {
      input.value = '';
      try { sessionStorage.removeItem(TOKEN_KEY); } catch (_) { /* ignore */ }
      input.focus();
      poll();
    });
    $('token-form').addEventListener('submit', (ev) => ev.preventDefault());
  }

  function init() {
    initToken();
    $('next-form').addEventListener('submit', next);
    $('decode-form').addEventListener('submit', decode);
    $('next-copy').addEventListener('click', copyIDs);
    $('next-decode').addEventListener('click', decodeFirst);
    poll();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
