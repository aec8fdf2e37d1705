// flurry dashboard: polls IDService/Info every second and renders the namespaces;
// issues and decodes IDs on request. Talks Connect's JSON protocol to the same
// origin; no libraries, no build step.
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

  async function call(method, body) {
    const headers = { 'Content-Type': 'application/json', 'Connect-Protocol-Version': '1' };
    const tok = token();
    if (tok) headers['Authorization'] = 'Bearer ' + tok;
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), TIMEOUT_MS);
    let res;
    try {
      res = await fetch(API + method, {
        method: 'POST', headers, body: JSON.stringify(body || {}),
        signal: ctl.signal, cache: 'no-store', credentials: 'omit',
      });
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

  function clockTime(d) { return d.toLocaleTimeString('en-GB', { hour12: false }); }

  function fields(list) {
    return (list || []).map((f) => f.name + '=' + (f.value || '0')).join(', ');
  }

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
    };
    parts.name.textContent = name;
    el.setAttribute('aria-labelledby', (parts.name.id = 'ns-h-' + name));
    c = { el, parts, prev: null, rate: NaN };
    cards.set(name, c);
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
      p.layoutSec.hidden = p.leaseSec.hidden = p.segmentSec.hidden = true;
      c.prev = null;
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
          const d = (nowMs - t) / 1000;
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
    });
    for (const [name, c] of cards) {
      if (!seen.has(name)) { c.el.remove(); cards.delete(name); }
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
