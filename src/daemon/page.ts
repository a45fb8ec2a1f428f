/**
 * The daemon's page to decide on proposals (`GET /page`): every space with its memory, its last runs and their
 * cost, and each proposal awaiting a decision with its changes (a box each), the exact diff, and accept / reject
 * buttons. Server-rendered HTML, no framework, no build step. The buttons POST to
 * `/spaces/:id/proposals/:run/accept|reject` with the chosen fact ids; those routes, like the page, sit behind
 * the API's Host, Origin and token checks (server.ts): a browser sends the token as the basic-auth password,
 * which it then sends with every request of the page, so the page never holds the token.
 *
 * Everything shown comes from memory and transcripts, which are input: it is escaped, and the page forbids
 * every script but its own (Content-Security-Policy with a nonce).
 */
import { AGENTS_FILE, isAgentFact } from '../memory/agents-block.js';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import type { Config, Space } from '../config/schema.js';
import { layoutOfSpace } from '../config/schema.js';
import {
  acceptProposal,
  listProposalViews,
  NothingToAcceptError,
  ProposalStaleError,
  rejectProposal,
  UnknownChangeError,
  type ProposalChange,
  type ProposalView,
} from '../consolidation/proposal.js';
import type { Fact } from '../memory/types.js';
import { errorMessage, LockBusyError } from '../errors.js';
import { listRuns, loadMemory, ProposalNotFoundError, runIdProblem, type RunRecord } from '../space/index.js';

/** Runs listed per space. */
const RUNS_SHOWN = 5;
/** Active fact titles listed per space. */
const FACTS_SHOWN = 50;

/** What the page shows of one space. */
export interface PageSpace {
  readonly id: string;
  /** Approval mode: every run (`true`), only runs that change the team's `AGENTS.md` (`shared`), or off. */
  readonly approve: boolean | 'shared';
  readonly activeFacts: readonly string[];
  readonly runs: readonly Pick<RunRecord, 'runId' | 'kind' | 'committedAt' | 'summary'>[];
  readonly proposals: readonly ProposalView[];
  /** Why part of it could not be read, if so. */
  readonly problems: readonly string[];
}

/** Text safe inside HTML elements and double-quoted attributes. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

function usd(value: number | undefined): string {
  return value === undefined ? 'unknown' : `$${value.toFixed(4)}`;
}

function renderRuns(space: PageSpace): string {
  if (space.runs.length === 0) return '<p>No run yet.</p>';
  const rows = space.runs.map(
    (run) =>
      `<tr><td><code>${escapeHtml(run.runId)}</code></td><td>${escapeHtml(run.kind)}</td>` +
      `<td>${escapeHtml(run.committedAt)}</td><td>${escapeHtml(run.summary.status)}</td>` +
      `<td>+${run.summary.added} ~${run.summary.updated} ⇢${run.summary.superseded}</td>` +
      `<td>${run.summary.calls}</td><td>${usd(run.summary.costUsd)}</td></tr>`,
  );
  return (
    '<table class="runs"><thead><tr><th>run</th><th>kind</th><th>committed</th><th>status</th>' +
    `<th>changes</th><th>calls</th><th>cost</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
  );
}

/** A fact's text on a card: its body, and for feedback and project facts why and how to apply it. */
function renderFactText(fact: Fact): string {
  const parts = [`<p class="body">${escapeHtml(fact.body)}</p>`];
  if (fact.why !== undefined) parts.push(`<p class="why"><b>Why:</b> ${escapeHtml(fact.why)}</p>`);
  if (fact.howToApply !== undefined)
    parts.push(`<p class="how"><b>How to apply:</b> ${escapeHtml(fact.howToApply)}</p>`);
  return parts.join('');
}

const CHANGE_LABEL: Readonly<Record<ProposalChange['kind'], string>> = {
  add: 'Adds',
  update: 'Updates',
  supersede: 'Supersedes',
};

/** One change as a card: what the fact says, where it comes from, what it does to memory, and its box. */
function renderChange(change: ProposalChange, teamFile: boolean): string {
  const { fact } = change;
  const team =
    teamFile && isAgentFact({ ...fact, status: 'active' })
      ? ' <span class="team" title="AGENTS.md is committed in the repository: every teammate and coding agent reads it">goes to the team\'s AGENTS.md</span>'
      : '';
  const box =
    `<label class="choose"><input type="checkbox" name="only" value="${escapeHtml(change.id)}"` +
    `${change.rejected ? ' disabled' : ' checked'}> include</label>`;
  // A new fact that replaces others is shown as what it does: it supersedes them.
  const kind = change.supersedes.length > 0 ? 'supersede' : change.kind;
  const head =
    `<header><span class="kind kind-${kind}">${CHANGE_LABEL[kind]}</span> ` +
    `<span class="type">${escapeHtml(fact.type)}</span> <strong class="title">${escapeHtml(fact.title)}</strong> ` +
    `<code class="id">${escapeHtml(change.id)}</code>${team}${change.rejected ? ' <em>(rejected)</em>' : ''}${box}</header>`;
  let effect: string;
  if (change.kind === 'update' && change.before !== undefined) {
    effect =
      '<div class="sides">' +
      `<div class="old"><h5>In memory now</h5>${renderFactText(change.before)}</div>` +
      `<div class="new"><h5>Proposed</h5>${renderFactText(fact)}</div></div>`;
  } else {
    effect = renderFactText(fact);
  }
  const superseded =
    change.supersedes.length === 0
      ? ''
      : `<div class="superseded"><h5>Replaces (moves to the archive, <code>.dreamd/archive.json</code>)</h5>` +
        change.supersedes
          .map(
            (old) =>
              `<div class="old"><strong>${escapeHtml(old.title)}</strong> <code>${escapeHtml(old.id)}</code>${renderFactText(old)}</div>`,
          )
          .join('') +
        '</div>';
  const sources =
    fact.sources.length === 0
      ? ''
      : `<p class="sources">From session(s) ${fact.sources.map((id) => `<code>${escapeHtml(id)}</code>`).join(', ')}; observed ${escapeHtml(fact.observed)}</p>`;
  const quote =
    change.quote === undefined
      ? ''
      : `<blockquote class="quote">${escapeHtml(change.quote.text)}<footer>said in <code>${escapeHtml(change.quote.session)}</code></footer></blockquote>`;
  return `<article class="card" id="change-${escapeHtml(change.id)}">${head}${effect}${superseded}${quote}${sources}</article>`;
}

/** The files of a unified diff (`--- a/…` / `+++ b/…` headers), each with its lines. */
export function diffByFile(diff: string): { file: string; lines: string[] }[] {
  const files: { file: string; lines: string[] }[] = [];
  const lines = diff.split('\n');
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index]!;
    const next = lines[index + 1];
    if (line.startsWith('--- ') && next?.startsWith('+++ ') === true) {
      const name = (path: string): string => path.replace(/^[ab]\//, '');
      const before = line.slice(4);
      const after = next.slice(4);
      files.push({ file: name(after === '/dev/null' ? before : after), lines: [] });
      index += 1;
      continue;
    }
    if (line === '' && index === lines.length - 1) continue;
    files.at(-1)?.lines.push(line);
  }
  return files;
}

/** Whether a file of a proposal is a repository's `AGENTS.md`: the team's file. */
function isTeamFile(file: string): boolean {
  return file === AGENTS_FILE || file.endsWith(`/${AGENTS_FILE}`);
}

/** One file's diff with insertions and deletions marked up (`<ins>`, `<del>`: screen readers say so). */
function renderFileDiff(file: string, lines: readonly string[]): string {
  const body = lines
    .map((line) => {
      const text = escapeHtml(line.slice(1));
      if (line.startsWith('+')) return `<ins>${text}</ins>`;
      if (line.startsWith('-')) return `<del>${text}</del>`;
      if (line.startsWith('@@')) return `<span class="hunk">${escapeHtml(line)}</span>`;
      if (line.startsWith('\\')) return `<span class="note">${escapeHtml(line)}</span>`;
      return `<span class="same">${text}</span>`;
    })
    .join('');
  const team = isTeamFile(file)
    ? ' <span class="team">the team\'s file: committed in the repository, read by every teammate and coding agent</span>'
    : '';
  return `<figure class="file-diff"><figcaption><code>${escapeHtml(file)}</code>${team}</figcaption><pre class="diff">${body}</pre></figure>`;
}

/** The diffs: memory files shown, dreamd's own files (`.dreamd/`) behind a toggle. */
function renderDiffs(diff: string): string {
  const files = diffByFile(diff);
  const memory = files.filter((entry) => !entry.file.startsWith('.dreamd/'));
  const own = files.filter((entry) => entry.file.startsWith('.dreamd/'));
  const shown =
    memory.length === 0
      ? '<p>No memory file changes.</p>'
      : memory.map((entry) => renderFileDiff(entry.file, entry.lines)).join('');
  const hidden =
    own.length === 0
      ? ''
      : `<details class="own-files"><summary>dreamd's own files (${own.length})</summary>` +
        own.map((entry) => renderFileDiff(entry.file, entry.lines)).join('') +
        '</details>';
  return `<section class="diffs"><h4>What changes in the memory files</h4>${shown}${hidden}</section>`;
}

function renderProposal(space: PageSpace, view: ProposalView): string {
  const memoryFiles = view.files.filter((file) => !file.startsWith('.dreamd/'));
  return (
    `<section class="proposal" data-space="${escapeHtml(space.id)}" data-run="${escapeHtml(view.runId)}">` +
    `<h3>Proposal <code>${escapeHtml(view.runId)}</code></h3>` +
    `<p class="meta">Made ${escapeHtml(view.createdAt)} from ${view.sessions.length} session(s); cost ${usd(view.costUsd)}. ` +
    `${view.changes.length} change(s) to ${memoryFiles.map((file) => `<code>${escapeHtml(file)}</code>`).join(', ') || 'no memory file'}.</p>` +
    `<div class="cards">${view.changes.map((change) => renderChange(change, view.files.some(isTeamFile))).join('')}</div>` +
    '<p class="actions"><button type="button" data-action="accept">Accept selected</button> ' +
    '<button type="button" data-action="reject">Reject selected</button></p>' +
    '<p class="outcome" role="status"></p>' +
    renderDiffs(view.diff) +
    '</section>'
  );
}

function renderSpace(space: PageSpace): string {
  const facts =
    space.activeFacts.length === 0
      ? '<p>No active fact.</p>'
      : `<ul class="facts">${space.activeFacts.map((title) => `<li>${escapeHtml(title)}</li>`).join('')}</ul>`;
  const proposals =
    space.proposals.length === 0
      ? '<p class="no-proposal">No proposal awaits a decision.</p>'
      : space.proposals.map((view) => renderProposal(space, view)).join('');
  const problems = space.problems.map((problem) => `<p class="problem">${escapeHtml(problem)}</p>`).join('');
  return (
    `<section class="space" id="space-${escapeHtml(space.id)}"><h2>Space ${escapeHtml(space.id)}</h2>` +
    `<p>Approval mode ${space.approve === 'shared' ? "on for the team's file: a run that changes AGENTS.md proposes, you decide; the others write memory directly" : space.approve ? 'on: runs propose, you decide' : 'off: runs write memory directly'}.</p>` +
    problems +
    `<h3>Proposals</h3>${proposals}<h3>Last runs</h3>${renderRuns(space)}` +
    `<h3>Memory (${space.activeFacts.length} active fact(s))</h3>${facts}</section>`
  );
}

/**
 * The script of the page: each button sends the checked changes of its proposal; the outcome is said at the top
 * of the page (accepted, rejected, left out, or why it was refused), and the space's section is read again from
 * the page, so a decided or dropped proposal leaves it and its memory shows what changed, with no reload.
 */
const SCRIPT = `
const status = document.getElementById('outcome');
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
  if (next && current) current.replaceWith(document.importNode(next, true));
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

const STYLE = `
:root { color-scheme: light; --line: #d0d7de; --muted: #57606a; --add: #dafbe1; --addtext: #116329; --del: #ffebe9; --deltext: #82071e; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; padding: 1rem; max-width: 72rem; color: #1f2328; }
h1 { font-size: 1.5rem; margin: 0.5rem 0 1rem; }
h2 { font-size: 1.25rem; border-bottom: 1px solid var(--line); padding-bottom: 0.3rem; }
h3 { font-size: 1.05rem; margin: 1.2rem 0 0.4rem; }
h4 { font-size: 0.95rem; margin: 1rem 0 0.4rem; }
h5 { font-size: 0.8rem; margin: 0 0 0.2rem; color: var(--muted); text-transform: uppercase; letter-spacing: 0.03em; }
code { font: 0.85em ui-monospace, SFMono-Regular, Menlo, monospace; }
#outcome { position: sticky; top: 0; margin: 0 0 1rem; padding: 0.6rem 0.8rem; border-radius: 6px; font-weight: 600; }
#outcome:empty { display: none; }
#outcome.done { background: var(--add); color: var(--addtext); }
#outcome.refused { background: var(--del); color: var(--deltext); }
section.proposal { border: 1px solid var(--line); border-radius: 8px; padding: 0.2rem 1rem 1rem; margin: 1rem 0; }
.meta, .sources { color: var(--muted); font-size: 0.9rem; }
.cards { display: grid; gap: 0.75rem; }
.team { font-size: 0.8rem; padding: 0 0.3rem; border-radius: 3px; background: #fff3cd; color: #664d03; }
article.card { border: 1px solid var(--line); border-radius: 6px; padding: 0.6rem 0.8rem; }
article.card header { display: flex; flex-wrap: wrap; gap: 0.4rem; align-items: baseline; }
article.card p { margin: 0.3rem 0; }
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
figure.file-diff { margin: 0.6rem 0; border: 1px solid var(--line); border-radius: 6px; overflow: hidden; }
figure.file-diff figcaption { background: #f6f8fa; padding: 0.3rem 0.6rem; border-bottom: 1px solid var(--line); }
pre.diff { margin: 0; padding: 0.4rem 0; overflow-x: auto; font: 0.8rem/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; }
pre.diff > * { display: block; min-height: 1.45em; padding: 0 0.6rem; white-space: pre-wrap; word-break: break-word; }
pre.diff ins { background: var(--add); color: var(--addtext); text-decoration: none; }
pre.diff ins::before { content: "+ "; }
pre.diff del { background: var(--del); color: var(--deltext); text-decoration: none; }
pre.diff del::before { content: "- "; }
pre.diff .same::before { content: "  "; }
pre.diff .hunk, pre.diff .note { color: var(--muted); background: #f6f8fa; }
table.runs { border-collapse: collapse; display: block; overflow-x: auto; }
table.runs td, table.runs th { padding: 0.15rem 0.6rem; text-align: left; border-bottom: 1px solid var(--line); white-space: nowrap; }
.problem { color: var(--deltext); }
@media (max-width: 640px) {
  body { padding: 0.5rem; font-size: 14px; }
  .sides { grid-template-columns: 1fr; }
  label.choose { margin-left: 0; }
}
`;

/** The whole page; `nonce` is the one script's, as the Content-Security-Policy header names it. */
export function renderPage(spaces: readonly PageSpace[], nonce: string): string {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>dreamd: proposals</title>' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<style nonce="${nonce}">${STYLE}</style></head><body><h1>dreamd</h1>` +
    '<p id="outcome" role="status" aria-live="polite"></p>' +
    (spaces.length === 0 ? '<p>No space is configured.</p>' : spaces.map(renderSpace).join('')) +
    `<script nonce="${nonce}">${SCRIPT}</script></body></html>`
  );
}

/** What the page shows of each configured space (read from its memory folder). */
export async function readPageSpaces(spaces: readonly Space[]): Promise<PageSpace[]> {
  return Promise.all(
    spaces.map(async (space): Promise<PageSpace> => {
      const problems: string[] = [];
      const [facts, runs, proposals] = await Promise.all([
        loadMemory(space.memoryDir, { layout: layoutOfSpace(space) })
          .then((memory) => memory.facts.filter((fact) => fact.status === 'active').map((fact) => fact.title))
          .catch((error: unknown) => {
            problems.push(`memory: ${errorMessage(error)}`);
            return [];
          }),
        listRuns(space.memoryDir).catch((error: unknown) => {
          problems.push(`history: ${errorMessage(error)}`);
          return [];
        }),
        listProposalViews([space]).catch((error: unknown) => {
          problems.push(`proposals: ${errorMessage(error)}`);
          return { proposals: [], problems: [] };
        }),
      ]);
      return {
        id: space.id,
        approve: space.approve === 'shared' ? 'shared' : space.approve === true,
        activeFacts: facts.slice(0, FACTS_SHOWN),
        runs: runs.slice(-RUNS_SHOWN).reverse(),
        proposals: proposals.proposals,
        problems: [...problems, ...proposals.problems.map((problem) => problem.reason)],
      };
    }),
  );
}

/** Body of the accept and reject routes. */
const DecisionBody = z.strictObject({
  /** Fact ids of the changes decided on; absent: all. */
  only: z.array(z.string().min(1)).min(1).optional(),
});

/** The HTTP status of an accept or reject that failed for a reason the person can act on. */
function decisionStatus(error: unknown): number | undefined {
  if (error instanceof ProposalNotFoundError) return 404;
  if (error instanceof ProposalStaleError || error instanceof LockBusyError) return 409;
  if (error instanceof UnknownChangeError || error instanceof NothingToAcceptError) return 400;
  return undefined;
}

/** Adds `GET /page`, `GET /proposals` and the accept and reject routes to the daemon's server. */
export function registerPage(app: FastifyInstance, getConfig: () => Config): void {
  const findSpace = (id: string): Space | undefined => getConfig().spaces.find((space) => space.id === id);

  app.get('/page', async (_request, reply) => {
    const nonce = randomBytes(16).toString('base64');
    const html = renderPage(await readPageSpaces(getConfig().spaces), nonce);
    await reply
      .header('content-type', 'text/html; charset=utf-8')
      .header(
        'content-security-policy',
        `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'`,
      )
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'no-store')
      .send(html);
  });

  app.get('/proposals', async () => listProposalViews(getConfig().spaces));

  const decide =
    (action: 'accept' | 'reject') =>
    async (
      request: { params: { id: string; run: string }; body: unknown },
      reply: FastifyReply,
    ): Promise<unknown> => {
      const space = findSpace(request.params.id);
      if (space === undefined) return reply.code(404).send({ error: `no space "${request.params.id}"` });
      const runProblem = runIdProblem(request.params.run);
      if (runProblem !== undefined) return reply.code(400).send({ error: runProblem });
      const body = DecisionBody.safeParse(request.body ?? {});
      if (!body.success)
        return reply.code(400).send({ error: 'invalid body; expected {"only"?: ["<fact id>", …]}' });
      const options = { config: getConfig(), only: body.data.only, command: `page ${action}` };
      try {
        if (action === 'accept') {
          const outcome = await acceptProposal(space, request.params.run, options);
          return {
            runId: request.params.run,
            accepted: outcome.accepted,
            leftOut: outcome.leftOut,
            files: Object.keys(outcome.record.files),
          };
        }
        return { runId: request.params.run, ...(await rejectProposal(space, request.params.run, options)) };
      } catch (error) {
        const status = decisionStatus(error);
        if (status === undefined) throw error;
        return reply.code(status).send({ error: errorMessage(error) });
      }
    };
  app.post<{ Params: { id: string; run: string } }>('/spaces/:id/proposals/:run/accept', decide('accept'));
  app.post<{ Params: { id: string; run: string } }>('/spaces/:id/proposals/:run/reject', decide('reject'));
}
