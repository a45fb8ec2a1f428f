/**
 * The review page's script and stylesheet, served as files (`GET /page.js`, `GET /page.css`) so the page holds
 * no inline script or style: its Content-Security-Policy allows the script by the page's nonce and the
 * stylesheet from the daemon itself. A page the script fetches again (to redraw a space after a decision) is
 * parsed with `DOMParser`, which loads neither file: nothing in it breaks the policy.
 */

/**
 * The script of the page: each button sends the checked changes of its proposal; the outcome is said at the top
 * of the page (accepted, rejected, left out, or why it was refused), and the space's section is read again from
 * the page, so a decided or dropped proposal leaves it and its memory shows what changed, with no reload.
 * Every `<time datetime>` is shown in the reader's own time zone and language (`Intl.DateTimeFormat`); without
 * the script it reads in UTC, as the server wrote it.
 */
export const PAGE_SCRIPT = `'use strict';
const status = document.getElementById('outcome');
const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
function localTimes(root) {
  for (const node of root.querySelectorAll('time[datetime]')) {
    const date = new Date(node.dateTime);
    if (Number.isNaN(date.getTime())) continue;
    node.title = node.textContent;
    node.textContent = timeFormat.format(date);
  }
}
localTimes(document);
const titleOf = (section, id) =>
  section.querySelector('#change-' + CSS.escape(id) + ' .title')?.textContent ?? id;
const named = (section, ids) => ids.map((id) => '"' + titleOf(section, id) + '"').join(', ');
async function refresh(spaceId) {
  const response = await fetch('/page', { credentials: 'same-origin' });
  const html = await response.text();
  const fresh = new DOMParser().parseFromString(html, 'text/html');
  const id = 'space-' + spaceId;
  const next = fresh.getElementById(id);
  const current = document.getElementById(id);
  if (next && current) {
    const imported = document.importNode(next, true);
    localTimes(imported);
    current.replaceWith(imported);
  }
}
document.addEventListener('click', async (event) => {
  const button = event.target.closest('section.proposal button[data-action]');
  if (!button) return;
  const section = button.closest('section.proposal');
  const local = section.querySelector('.outcome');
  const only = [...section.querySelectorAll('input[name="only"]:checked')].map((box) => box.value);
  if (only.length === 0) { local.textContent = 'Choose at least one change.'; return; }
  for (const other of section.querySelectorAll('button')) other.disabled = true;
  const action = button.dataset.action;
  const spaceId = section.dataset.space;
  const run = section.dataset.run;
  const url = '/spaces/' + encodeURIComponent(spaceId) + '/proposals/' + encodeURIComponent(run) + '/' + action;
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ only }),
      credentials: 'same-origin',
    });
    const body = await response.json();
    if (!response.ok) {
      const error = new Error(body.error || response.statusText);
      error.status = response.status;
      throw error;
    }
    let message;
    if (action === 'accept') {
      message = 'Proposal ' + run + ': accepted ' + named(section, body.accepted) + '.';
      if (body.leftOut.length > 0) message += ' Left out (remembered as rejected): ' + named(section, body.leftOut) + '.';
    } else {
      message = 'Proposal ' + run + ': rejected ' + named(section, body.rejected) + '.';
      message += body.dropped
        ? ' Nothing of it is left; its sessions are done and will not be sent to the model again.'
        : ' The rest of it still awaits a decision.';
    }
    status.className = 'done';
    status.textContent = message;
    await refresh(spaceId);
  } catch (error) {
    const gone = error.status === 404 || error.status === 409;
    status.className = 'refused';
    status.textContent = 'Proposal ' + run + ' was not ' + (action === 'accept' ? 'accepted' : 'rejected') + ': ' + error.message;
    if (gone) await refresh(spaceId).catch(() => undefined);
    else {
      local.textContent = error.message;
      for (const other of section.querySelectorAll('button')) other.disabled = false;
    }
  }
});
`;

/**
 * Fonts with the glyphs of Chinese and Japanese after the system's own: where the system font has none (a Linux
 * desktop without a CJK default), the browser takes the first of these that is installed instead of drawing
 * boxes. Noto CJK (Linux), PingFang and Hiragino (macOS), Microsoft YaHei and Yu Gothic (Windows).
 */
const SANS =
  'system-ui, -apple-system, "Segoe UI", "Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Sans CJK TC", ' +
  '"PingFang SC", "Hiragino Sans", "Hiragino Kaku Gothic ProN", "Microsoft YaHei", "Yu Gothic", "Meiryo", sans-serif';
const MONO =
  'ui-monospace, SFMono-Regular, Menlo, Consolas, "Noto Sans Mono CJK SC", "Noto Sans Mono CJK JP", ' +
  '"PingFang SC", "Hiragino Sans", "Microsoft YaHei", "MS Gothic", monospace';

export const PAGE_STYLE = `
:root { color-scheme: light; --line: #d0d7de; --muted: #57606a; --add: #dafbe1; --addtext: #116329; --del: #ffebe9; --deltext: #82071e; }
* { box-sizing: border-box; }
body { font: 15px/1.5 ${SANS}; margin: 0 auto; padding: 1rem; max-width: 72rem; color: #1f2328; }
h1 { font-size: 1.5rem; margin: 0.5rem 0 1rem; }
h2 { font-size: 1.25rem; border-bottom: 1px solid var(--line); padding-bottom: 0.3rem; }
h3 { font-size: 1.05rem; margin: 1.2rem 0 0.4rem; }
h4 { font-size: 0.95rem; margin: 1rem 0 0.4rem; }
h5 { font-size: 0.8rem; margin: 0 0 0.2rem; color: var(--muted); text-transform: uppercase; letter-spacing: 0.03em; }
code { font: 0.85em ${MONO}; }
#outcome { position: sticky; top: 0; margin: 0 0 1rem; padding: 0.6rem 0.8rem; border-radius: 6px; font-weight: 600; }
#outcome:empty { display: none; }
#outcome.done { background: var(--add); color: var(--addtext); }
#outcome.refused { background: var(--del); color: var(--deltext); }
.last-decision { padding: 0.4rem 0.8rem; border-left: 3px solid var(--addtext); background: #f6f8fa; }
section.proposal { border: 1px solid var(--line); border-radius: 8px; padding: 0.2rem 1rem 1rem; margin: 1rem 0; }
.meta, .sources { color: var(--muted); font-size: 0.9rem; }
.cards { display: grid; gap: 0.75rem; }
.team { font-size: 0.8rem; padding: 0 0.3rem; border-radius: 3px; background: #fff3cd; color: #664d03; }
article.card { border: 1px solid var(--line); border-radius: 6px; padding: 0.6rem 0.8rem; }
article.card header { display: flex; flex-wrap: wrap; gap: 0.4rem; align-items: baseline; }
article.card p { margin: 0.3rem 0; }
a.to-diff { font-size: 0.85rem; }
.kind { font-size: 0.75rem; font-weight: 700; padding: 0.05rem 0.45rem; border-radius: 1rem; background: #ddf4ff; color: #0550ae; }
.kind-update { background: #fff8c5; color: #7d4e00; }
.kind-supersede { background: #fbefff; color: #6639ba; }
.type { font-size: 0.8rem; color: var(--muted); }
.id { color: var(--muted); }
label.choose { margin-left: auto; white-space: nowrap; }
.sides { display: grid; grid-template-columns: 1fr 1fr; gap: 0.6rem; }
.sides .old, .superseded .old { background: var(--del); border-radius: 4px; padding: 0.3rem 0.5rem; }
.sides .new { background: var(--add); border-radius: 4px; padding: 0.3rem 0.5rem; }
.superseded { margin-top: 0.4rem; }
blockquote.quote { margin: 0.4rem 0; padding: 0.2rem 0.7rem; border-left: 3px solid var(--line); color: #3d444d; font-style: italic; }
blockquote.quote footer { font-style: normal; font-size: 0.8rem; color: var(--muted); }
.actions button { font: inherit; padding: 0.35rem 0.9rem; border-radius: 6px; border: 1px solid var(--line); background: #f6f8fa; cursor: pointer; }
.actions button[data-action="accept"] { background: #1f883d; color: #fff; border-color: #1a7f37; }
.actions button:disabled { opacity: 0.6; cursor: default; }
.outcome { color: var(--deltext); }
section.change-diff { margin: 0.8rem 0; }
section.change-diff h5 a { color: inherit; }
figure.file-diff { margin: 0.4rem 0; border: 1px solid var(--line); border-radius: 6px; overflow: hidden; }
figure.file-diff figcaption { background: #f6f8fa; padding: 0.3rem 0.6rem; border-bottom: 1px solid var(--line); }
.diff { margin: 0; padding: 0.4rem 0; overflow-x: auto; font: 0.8rem/1.45 ${MONO}; }
.diff > *, .diff details > * { display: block; min-height: 1.45em; padding: 0 0.6rem; white-space: pre-wrap; word-break: break-word; }
.diff ins { background: var(--add); color: var(--addtext); text-decoration: none; }
.diff ins::before { content: "+ "; }
.diff del { background: var(--del); color: var(--deltext); text-decoration: none; }
.diff del::before { content: "- "; }
.diff .same::before { content: "  "; }
.diff .hunk, .diff .note { color: var(--muted); background: #f6f8fa; }
.diff details.bookkeeping { padding: 0; }
.diff details.bookkeeping > summary { color: var(--muted); cursor: pointer; font-style: italic; }
details.whole-files, details.own-files { margin: 0.6rem 0; }
table.runs { border-collapse: collapse; display: block; overflow-x: auto; }
table.runs td, table.runs th { padding: 0.15rem 0.6rem; text-align: left; border-bottom: 1px solid var(--line); white-space: nowrap; }
.problem { color: var(--deltext); }
@media (max-width: 640px) {
  body { padding: 0.5rem; font-size: 14px; }
  .sides { grid-template-columns: 1fr; }
  label.choose { margin-left: 0; }
}
`;
