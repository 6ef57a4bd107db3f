// The trace viewer (docs/trace-viewer.md): the sessions of this `reins serve`, a
// session's turns, a turn's timeline, kept up to date from the session's event stream.
// Pages: #/ (sessions), #/s/ID (a session), #/s/ID/t/N (a turn). With API keys on,
// the key is asked once and kept in this tab's sessionStorage; every request sends it
// as the Authorization header (events too: fetch streaming, since EventSource cannot
// send headers). No cookies. Server text reaches the page as text only (timeline.js).
'use strict';

(() => {
  const {el, renderTurn} = ReinsTimeline;
  const main = document.getElementById('main');
  const live = document.getElementById('live');
  const forget = document.getElementById('forget');
  const KEY = 'reins.api_key';
  let following = null;  // the AbortController of the event stream being followed
  let refresh = null;    // reads the current page again: resolves to show()'s arguments
  let shown = 0;         // counts navigations: a page whose reads finish after the next began is dropped

  class Unauthorized extends Error {}

  function headers() {
    const key = sessionStorage.getItem(KEY);
    return key ? {Authorization: 'Bearer ' + key} : {};
  }

  async function getJson(path) {
    const res = await fetch(path, {headers: headers(), cache: 'no-store'});
    if (res.status === 401) throw new Unauthorized();
    const body = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error((body.error && body.error.message) || res.status + ' ' + res.statusText);
    return body;
  }

  // Draws a page; a link that had the focus keeps it (a live redraw must not throw a
  // keyboard user back to the top).
  function show(title, ...nodes) {
    const had = main.contains(document.activeElement) ? document.activeElement.getAttribute('href') : null;
    document.title = title + ' · reins';
    main.replaceChildren(el('h1', {}, title), ...nodes);
    const again = had && main.querySelector('a[href="' + CSS.escape(had) + '"]');
    if (again) again.focus();
  }

  function askForKey(wrong) {
    stopFollowing();
    const input = el('input', {id: 'key', type: 'password', autocomplete: 'off', required: ''});
    const form = el('form', {class: 'key'},
                    el('label', {for: 'key'}, 'API key (reins keys add TENANT prints one)'), input,
                    el('p', {}, el('button', {type: 'submit'}, 'Open')));
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      sessionStorage.setItem(KEY, input.value.trim());
      route();
    });
    show('API key needed',
         el('p', {}, 'This server asks for an API key. It is kept in this tab only and sent with each request.'),
         wrong ? el('p', {class: 'bad', role: 'alert'}, 'That key was not accepted.') : '', form);
    input.focus();
  }

  function failed(e) {
    if (e instanceof Unauthorized) return askForKey(sessionStorage.getItem(KEY) !== null);
    show('Something went wrong', el('p', {class: 'bad', role: 'alert'}, String(e.message || e)),
         el('p', {}, el('a', {href: '#/'}, 'Back to the sessions')));
  }

  const sessionLink = (id) => el('a', {href: '#/s/' + encodeURIComponent(id)}, id);
  const turnLink = (id, n, text) => el('a', {href: '#/s/' + encodeURIComponent(id) + '/t/' + n}, text);

  function pendingText(s) {
    const asked = s.pending_clarification;
    if (asked) return 'asks: ' + ((asked.clarification && asked.clarification.question) || 'a choice');
    if (s.pending_approval) return 'waits for approval of ' + (s.pending_approval.tool || 'a call');
    return '';
  }

  // "2026-11-26T01:42:30Z" -> "2026-11-26 01:42:30 UTC": the server's times, as they are.
  const when = (iso) => (iso ? String(iso).replace('T', ' ').replace(/Z$/, ' UTC') : '');

  function leaseText(lease) {
    return lease ? lease.domain + ' (' + lease.owner + ', until ' + when(lease.expires_at) + ')' : '';
  }

  async function sessionsPage() {
    const body = await getJson('/v1/sessions?limit=100');
    const rows = (body.sessions || []).map((s) => el('tr', {},
        el('td', {}, sessionLink(s.session_id)),
        el('td', {}, s.opened_by ? s.opened_by + ': ' + (s.opened_with || '') : ''),
        el('td', {class: 'time'}, when(s.created_at)), el('td', {}, String(s.turns)),
        el('td', {}, s.status || 'no turns yet'), el('td', {}, leaseText(s.lease)),
        el('td', {class: 'pending'}, pendingText(s))));
    const table = el('table', {},
        el('caption', {}, rows.length ? 'Newest first.' : 'No sessions yet.'),
        el('thead', {}, el('tr', {}, ...['session', 'opened with', 'created', 'turns', 'last turn', 'lease', 'pending'].map((h) => el('th', {scope: 'col'}, h)))),
        el('tbody', {}, ...rows));
    const again = el('button', {type: 'button'}, 'Refresh');
    again.addEventListener('click', () => route());
    return ['Sessions', table, el('p', {}, again)];
  }

  // What reins did in a turn, as badges: "2 executed", "1 rejected", "1 fired" (a rail).
  // Model calls and leases are left to the turn's page.
  function outcomes(turn) {
    const counts = new Map();  // outcome -> [count, tone]
    for (const s of turn.steps || []) {
      if (s.kind === 'model' || s.kind === 'lease') continue;
      const [n] = counts.get(s.outcome) || [0];
      counts.set(s.outcome, [n + 1, s.tone]);
    }
    return [...counts].map(([o, [n, t]]) => el('span', {class: 'badge ' + (t || 'ok')}, n + ' ' + o));
  }

  // A session page lists its newest turns only, until asked for all: a long session's
  // every timeline is more than a page should read to draw a table.
  const kNewestTurns = 100;
  const wholeSessions = new Set();  // ids whose every turn was asked for

  async function sessionPage(id) {
    const summary = await getJson('/v1/sessions/' + id);
    const after = wholeSessions.has(id) ? 0 : Math.max(0, summary.turns - kNewestTurns);
    const timeline = await getJson('/v1/sessions/' + id + '/timeline' + (after > 0 ? '?after=' + after + '&limit=' + kNewestTurns : ''));
    // A page also ends at about 1 MiB (docs/http-api.md): the rest of the newest turns follow.
    for (let next = timeline.next_after; after > 0 && next !== undefined && timeline.turns.length < kNewestTurns;) {
      const page = await getJson('/v1/sessions/' + id + '/timeline?after=' + next + '&limit=' + (kNewestTurns - timeline.turns.length));
      timeline.turns.push(...(page.turns || []));
      next = page.next_after;
    }
    const facts = el('dl', {class: 'summary'},
        el('dt', {}, 'created'), el('dd', {}, when(summary.created_at)),
        el('dt', {}, 'turns'), el('dd', {}, String(summary.turns)),
        el('dt', {}, 'lease'), el('dd', {}, leaseText(summary.lease) || 'none'),
        el('dt', {}, 'pending'), el('dd', pendingText(summary) ? {class: 'pending'} : {}, pendingText(summary) || 'nothing'));
    const rows = (timeline.turns || []).map((t) => el('tr', {},
        el('td', {class: 'time'}, turnLink(id, t.turn, 'Turn ' + t.turn)), el('td', {}, (t.speaker || '') + ': ' + (t.said || '')),
        el('td', {}, t.status || ''), el('td', {}, ...outcomes(t)), el('td', {}, t.reply || '')));
    const which = after > 0 ? 'The newest ' + rows.length + ' of ' + summary.turns + ' turns' : 'Each turn';
    const table = el('table', {},
        el('caption', {}, rows.length ? which + ': what the person said, what reins did, what it answered.' : 'No turns yet.'),
        el('thead', {}, el('tr', {}, ...['turn', 'said', 'status', 'what reins did', 'reply'].map((h) => el('th', {scope: 'col'}, h)))),
        el('tbody', {}, ...rows));
    if (after === 0) return ['Session ' + id, facts, table];
    const more = el('button', {type: 'button'}, 'Show all ' + summary.turns + ' turns');
    more.addEventListener('click', () => {
      wholeSessions.add(id);
      route();
    });
    return ['Session ' + id, facts, table, el('p', {}, more)];
  }

  // Where the ids a turn's calls were given came from: an auditor asks of every accepted
  // id which tool result (or which answer of the person) put it in the conversation.
  // Read from the turn's own earlier steps and the kProvenanceTurns turns before it: a
  // string argument that looks like an id (no spaces; a digit, '_' or '-' in it) and
  // that an earlier result holds as a JSON string, or that the person chose.
  const kProvenanceTurns = 50;
  const looksLikeId = (v) => typeof v === 'string' && v.length >= 3 && !/\s/.test(v) && /[0-9_-]/.test(v);

  async function earlierTurns(id, n) {
    const turns = [];
    let after = Math.max(0, n - 1 - kProvenanceTurns);
    while (after < n - 1) {
      const page = await getJson('/v1/sessions/' + id + '/timeline?after=' + after + '&limit=' + (n - 1 - after));
      turns.push(...(page.turns || []));
      if (page.next_after === undefined) break;
      after = page.next_after;
    }
    return turns;
  }

  function addProvenance(turn, earlier) {
    const origins = [];  // {holds(value), said}
    const note = (t, s) => {
      const details = new Map(s.details || []);
      if (s.kind === 'call' && details.has('result')) {
        const text = details.get('result');
        origins.push({holds: (v) => text.includes(JSON.stringify(v)), said: 'the result of ' + s.title + ', turn ' + t.turn});
      }
      if (s.kind === 'clarification' && s.outcome === 'answered') {
        const m = /\(([^()]*)\)$/.exec(s.title || '');
        const chosen = m ? m[1] : s.title;
        origins.push({holds: (v) => v === chosen, said: 'the person\'s choice, turn ' + t.turn});
      }
    };
    for (const t of earlier) for (const s of t.steps || []) note(t, s);
    for (const s of turn.steps || []) {
      const args = s.kind === 'call' ? new Map(s.details || []).get('arguments') : undefined;
      let given = null;
      try { given = args ? JSON.parse(args) : null; } catch (e) { given = null; }
      if (given && typeof given === 'object') {
        const from = [];
        for (const [name, value] of Object.entries(given)) {
          const where = looksLikeId(value) ? origins.filter((o) => o.holds(value)).map((o) => o.said) : [];
          if (where.length) from.push(name + ' ' + value + ': ' + [...new Set(where)].join('; '));
        }
        if (from.length) s.details = [...(s.details || []), ['ids from', from.join('\n')]];
      }
      note(turn, s);  // a later call of the same turn may use what this one returned
    }
  }

  async function turnPage(id, n) {
    const body = await getJson('/v1/sessions/' + id + '/timeline?after=' + (n - 1) + '&limit=1');
    const turn = (body.turns || [])[0];
    if (!turn) throw new Error('session ' + id + ' has no turn ' + n);
    addProvenance(turn, await earlierTurns(id, n));
    const summary = await getJson('/v1/sessions/' + id);
    const pager = el('nav', {class: 'pager', 'aria-label': 'turns'}, el('a', {href: '#/s/' + encodeURIComponent(id)}, 'All turns'),
                     n > 1 ? turnLink(id, n - 1, 'Previous turn') : '',
                     n < summary.turns ? turnLink(id, n + 1, 'Next turn') : '');
    return ['Session ' + id + ', turn ' + n, pager, renderTurn(turn)];
  }

  function stopFollowing() {
    if (following) following.abort();
    following = null;
    live.textContent = '';
  }

  // The session's events (GET .../events, server-sent events read through fetch): any
  // of them means the session changed, so the page is drawn again, at most every 300 ms.
  async function follow(id, visit) {
    const ctl = new AbortController();
    following = ctl;
    let timer = null;
    const changed = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        if (!ctl.signal.aborted) refresh().then((page) => visit === shown && show(...page), failed);
      }, 300);
    };
    while (!ctl.signal.aborted) {
      try {
        const res = await fetch('/v1/sessions/' + id + '/events', {headers: headers(), signal: ctl.signal});
        if (!res.ok || !res.body) throw new Error('events: ' + res.status);
        live.textContent = 'live';
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const {value, done} = await reader.read();
          if (done) break;
          buffer += value.replace(/\r\n/g, '\n');
          let end;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            if (/^event:/m.test(block)) changed();
          }
        }
      } catch (e) {
        if (ctl.signal.aborted) return;
      }
      live.textContent = 'reconnecting…';
      await new Promise((r) => setTimeout(r, 2000));
    }
  }

  async function route() {
    stopFollowing();
    const visit = ++shown;
    forget.hidden = sessionStorage.getItem(KEY) === null;
    const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
    try {
      if (parts[0] === 's' && parts[1]) {
        const id = encodeURIComponent(parts[1]);
        const n = parts[2] === 't' ? parseInt(parts[3], 10) : 0;
        refresh = n > 0 ? () => turnPage(id, n) : () => sessionPage(id);
      } else {
        refresh = sessionsPage;
      }
      const page = await refresh();
      if (visit !== shown) return;  // another page was asked for meanwhile
      show(...page);
      main.focus();
      if (parts[0] === 's' && parts[1]) follow(encodeURIComponent(parts[1]), visit);
    } catch (e) {
      if (visit === shown) failed(e);
    }
  }

  forget.addEventListener('click', () => {
    sessionStorage.removeItem(KEY);
    route();
  });
  window.addEventListener('hashchange', route);
  route();
})();
