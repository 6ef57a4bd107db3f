// The one renderer of a turn's timeline (the shape domain/timeline.h builds), shared by
// the trace viewer at /ui/ and the `reins eval` report's drill-down. Everything the
// model, a tool or a person wrote is untrusted: it reaches the page through
// textContent only, never as HTML.
'use strict';

const ReinsTimeline = (() => {
  // el('li', {class: 'step'}, child, 'text', ...): an element; strings become text nodes.
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    for (const c of children) {
      if (c === null || c === undefined || c === '') continue;
      node.append(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return node;
  }

  // The outcome's class: "ran after the reply" -> "ran-after-the-reply".
  const slug = (s) => String(s || '').toLowerCase().replace(/[^a-z0-9]+/g, '-');

  // A long or multi-line value in a <pre>, a short one inline; a rail's before and after
  // both in a <pre>, so that the two read side by side.
  function value(text, block) {
    const t = String(text);
    return block || t.length > 80 || t.includes('\n') ? el('pre', {}, t) : el('span', {}, t);
  }

  function step(s) {
    const outcome = String(s.outcome || '');
    const head = el('div', {class: 'step-head'},
                    el('span', {class: 'badge ' + (s.tone || 'ok')}, outcome),
                    el('span', {class: 'kind'}, s.kind || ''),
                    el('span', {class: 'title'}, s.title || ''),
                    el('span', {class: 'at'}, '+' + (s.at_ms || 0) + ' ms'));
    const node = el('li', {class: 'step kind-' + slug(s.kind) + ' outcome-' + slug(outcome), 'data-outcome': outcome}, head);
    if (s.why) node.append(el('p', {class: 'why'}, s.why));
    const details = s.details || [];
    if (details.length) {
      const dl = el('dl', {});
      for (const [label, text] of details) dl.append(el('dt', {}, label), el('dd', {}, value(text, s.kind === 'rail')));
      node.append(dl);
    }
    return node;
  }

  // One turn: who said what, the steps in order, and what reins finally sent.
  function renderTurn(turn) {
    const section = el('section', {class: 'turn', 'data-turn': String(turn.turn)});
    section.append(el('h3', {}, 'Turn ' + turn.turn + ' ', el('span', {class: 'status'}, turn.status || '')),
                   el('p', {class: 'said'}, el('b', {}, (turn.speaker || 'user') + ': '), turn.said || ''));
    const steps = turn.steps || [];
    const list = el('ol', {class: 'timeline', 'aria-label': 'What happened in turn ' + turn.turn});
    for (const s of steps) list.append(step(s));
    if (!steps.length) list.append(el('li', {class: 'step empty'}, 'no model or tool activity'));
    section.append(list, el('p', {class: 'reply'}, el('b', {}, 'reins: '), turn.reply || ''));
    return section;
  }

  // Every element carrying data-timeline (JSON of one turn) replaced by its rendering:
  // how the eval report draws its drill-down.
  function renderAll(root) {
    for (const holder of (root || document).querySelectorAll('[data-timeline]')) {
      try {
        holder.replaceChildren(renderTurn(JSON.parse(holder.getAttribute('data-timeline'))));
      } catch (e) {
        holder.append(el('p', {class: 'bad'}, 'cannot draw this turn: ' + e.message));
      }
    }
  }

  return {el, renderTurn, renderAll};
})();
