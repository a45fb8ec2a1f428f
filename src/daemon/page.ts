/**
 * The daemon's page to decide on proposals (`GET /page`): every space with its memory, its last runs and their
 * cost, and each proposal awaiting a decision with its changes (a box each), the exact diff, and accept / reject
 * buttons. Server-rendered HTML, no framework, no build step. The buttons POST to
 * `/spaces/:id/proposals/:run/accept|reject` with the chosen fact ids; those routes, like the page, sit behind
 * the API's Host, Origin and token checks (server.ts): a browser sends the token as the basic-auth password,
 * which it then sends with every request of the page, so the page never holds the token.
 *
 * A reader sees what a person reads of memory: each change's own diff (its fact's part of each file), with
 * dreamd's and Claude Code's bookkeeping (metadata comments, anchors, frontmatter) folded into a closed
 * `<details>` (readable-diff.ts); the whole files, and dreamd's own, behind toggles. Times are written in UTC
 * and shown in the reader's time zone by the page's script. The last decision on a space's proposals is said
 * from its run history, so it is still there after a reload.
 *
 * Everything shown comes from memory and transcripts, which are input: it is escaped, and the page holds no
 * inline script or style: its one script and its stylesheet are files the daemon serves (page-assets.ts),
 * allowed by the Content-Security-Policy (the script by a nonce).
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
  viewProposal,
  NothingToAcceptError,
  ProposalStaleError,
  rejectProposal,
  UnknownChangeError,
  type ProposalChange,
  type ProposalView,
} from '../consolidation/approval/proposal.js';
import type { Fact } from '../memory/types.js';
import { errorMessage, LockBusyError } from '../errors.js';
import {
  listProposals,
  listRuns,
  loadMemory,
  ProposalNotFoundError,
  runIdProblem,
  type ProposedFile,
  type RunRecord,
} from '../space/index.js';
import type { MemoryProblem } from '../space/memory-dir.js';
import type { ProposalDecision } from '../core/run.js';
import { PAGE_SCRIPT, PAGE_STYLE } from './page-assets.js';
import { factRegion, hunksOf, readableLines, type ReadableLine } from './readable-diff.js';

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
  readonly proposals: readonly PageProposal[];
  /** The latest decision on one of its proposals, from its run history; absent: none in the history. */
  readonly lastDecision?: { readonly decidedAt: string; readonly decision: ProposalDecision } | undefined;
  /** Why part of it could not be read, if so. */
  readonly problems: readonly string[];
}

/** A proposal as the page shows it: its view, and the bytes of each file before and after. */
export interface PageProposal extends ProposalView {
  readonly texts: readonly ProposedFile[];
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

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `6 Dec 2026, 01:27 UTC`: an ISO time as a person reads it, when no script shows it in their own zone. */
export function readableUtc(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const two = (value: number): string => String(value).padStart(2, '0');
  return (
    `${date.getUTCDate()} ${MONTHS[date.getUTCMonth()]!} ${date.getUTCFullYear()}, ` +
    `${two(date.getUTCHours())}:${two(date.getUTCMinutes())} UTC`
  );
}

/** A `<time>` the page's script shows in the reader's time zone; readable UTC without the script. */
function renderTime(iso: string): string {
  return `<time datetime="${escapeHtml(iso)}">${escapeHtml(readableUtc(iso))}</time>`;
}

function usd(value: number | undefined): string {
  return value === undefined ? 'unknown' : `$${value.toFixed(4)}`;
}

function renderRuns(space: PageSpace): string {
  if (space.runs.length === 0) return '<p>No run yet.</p>';
  const rows = space.runs.map(
    (run) =>
      `<tr><td><code>${escapeHtml(run.runId)}</code></td><td>${escapeHtml(run.kind)}</td>` +
      `<td>${renderTime(run.committedAt)}</td><td>${escapeHtml(run.summary.status)}</td>` +
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
  const link = `<p><a class="to-diff" href="#diff-${escapeHtml(change.id)}">Its diff</a></p>`;
  return `<article class="card" id="change-${escapeHtml(change.id)}">${head}${effect}${superseded}${quote}${sources}${link}</article>`;
}

/** Whether a file of a proposal is a repository's `AGENTS.md`: the team's file. */
function isTeamFile(file: string): boolean {
  return file === AGENTS_FILE || file.endsWith(`/${AGENTS_FILE}`);
}

/** Whether a file of a proposal is dreamd's own (`.dreamd/`), not memory a person or an agent reads. */
function isOwnFile(file: string): boolean {
  return file.startsWith('.dreamd/');
}

function renderLine(line: ReadableLine): string {
  const text = escapeHtml(line.text);
  if (line.kind === '+') return `<ins>${text}</ins>`;
  if (line.kind === '-') return `<del>${text}</del>`;
  return `<span class="same">${text}</span>`;
}

/**
 * A diff's lines, bookkeeping folded: each run of bookkeeping lines is one closed `<details>` a person can
 * open. `whole`: every line; else the lines near a change, the others counted.
 */
function renderLines(before: string | null, after: string | null, whole: boolean): string {
  const lines = readableLines(before, after);
  const shown = whole ? lines : hunksOf(lines);
  const parts: string[] = [];
  let folded: ReadableLine[] = [];
  const fold = (): void => {
    if (folded.length === 0) return;
    const changed = folded.some((line) => line.kind !== ' ') ? ', changed' : '';
    parts.push(
      `<details class="bookkeeping"><summary>bookkeeping: ${folded.length} line(s)${changed}</summary>` +
        `${folded.map(renderLine).join('')}</details>`,
    );
    folded = [];
  };
  for (const line of shown) {
    if (line.kind !== 'skipped' && line.bookkeeping) {
      folded.push(line);
      continue;
    }
    fold();
    parts.push(
      line.kind === 'skipped'
        ? `<span class="hunk">⋯ ${line.count} unchanged line(s)</span>`
        : renderLine(line),
    );
  }
  fold();
  return `<div class="diff">${parts.join('')}</div>`;
}

function renderFigure(file: string, body: string): string {
  const team = isTeamFile(file)
    ? ' <span class="team">the team\'s file: committed in the repository, read by every teammate and coding agent</span>'
    : '';
  return `<figure class="file-diff"><figcaption><code>${escapeHtml(file)}</code>${team}</figcaption>${body}</figure>`;
}

/** A change's own diff: its fact's part of each memory file, and of each fact it supersedes. */
function renderChangeDiff(change: ProposalChange, files: readonly ProposedFile[]): string {
  const ids = [change.id, ...change.supersedes.map((fact) => fact.id)];
  const figures: string[] = [];
  for (const file of files) {
    if (isOwnFile(file.path)) continue;
    for (const id of ids) {
      const before = factRegion(file.before, id);
      const after = factRegion(file.after, id);
      if (before === after) continue;
      figures.push(renderFigure(file.path, renderLines(before, after, true)));
    }
  }
  const body =
    figures.length === 0 ? '<p>No memory file holds this fact apart from the index.</p>' : figures.join('');
  return (
    `<section class="change-diff" id="diff-${escapeHtml(change.id)}">` +
    `<h5><a href="#change-${escapeHtml(change.id)}">${escapeHtml(change.fact.title)}</a></h5>${body}</section>`
  );
}

/**
 * The diffs: each change's own, then the memory files whole (the index, file headers) and dreamd's own files
 * (`.dreamd/`) behind toggles.
 */
function renderDiffs(view: PageProposal): string {
  const memory = view.texts.filter((file) => !isOwnFile(file.path));
  const own = view.texts.filter((file) => isOwnFile(file.path));
  const whole = (files: readonly ProposedFile[]): string =>
    files.map((file) => renderFigure(file.path, renderLines(file.before, file.after, false))).join('');
  const byChange =
    view.changes.length === 0
      ? '<p>No change to the facts.</p>'
      : view.changes.map((change) => renderChangeDiff(change, view.texts)).join('');
  const files =
    memory.length === 0
      ? ''
      : `<details class="whole-files"><summary>The memory files as written (${memory.length})</summary>${whole(memory)}</details>`;
  const hidden =
    own.length === 0
      ? ''
      : `<details class="own-files"><summary>dreamd's own files (${own.length})</summary>${whole(own)}</details>`;
  return `<section class="diffs"><h4>What each change does to the memory files</h4>${byChange}${files}${hidden}</section>`;
}

function renderProposal(space: PageSpace, view: PageProposal): string {
  const memoryFiles = view.files.filter((file) => !isOwnFile(file));
  return (
    `<section class="proposal" data-space="${escapeHtml(space.id)}" data-run="${escapeHtml(view.runId)}">` +
    `<h3>Proposal <code>${escapeHtml(view.runId)}</code></h3>` +
    `<p class="meta">Made ${renderTime(view.createdAt)} from ${view.sessions.length} session(s); cost ${usd(view.costUsd)}. ` +
    `${view.changes.length} change(s) to ${memoryFiles.map((file) => `<code>${escapeHtml(file)}</code>`).join(', ') || 'no memory file'}.</p>` +
    `<div class="cards">${view.changes.map((change) => renderChange(change, view.files.some(isTeamFile))).join('')}</div>` +
    '<p class="actions"><button type="button" data-action="accept">Accept selected</button> ' +
    '<button type="button" data-action="reject">Reject selected</button></p>' +
    '<p class="outcome" role="status"></p>' +
    renderDiffs(view) +
    '</section>'
  );
}

/** What a decision did, in the words the page's script says it with when it is made. */
export function describeDecision(decision: ProposalDecision): string {
  const named = (changes: ProposalDecision['decided']): string =>
    changes.map((change) => `"${change.title}"`).join(', ');
  if (decision.action === 'accept') {
    const left =
      decision.rest.length === 0 ? '' : ` Left out (remembered as rejected): ${named(decision.rest)}.`;
    return `Proposal ${decision.proposal}: accepted ${named(decision.decided)}.${left}`;
  }
  return (
    `Proposal ${decision.proposal}: rejected ${named(decision.decided)}.` +
    (decision.rest.length === 0
      ? ' Nothing of it is left; its sessions are done and will not be sent to the model again.'
      : ` The rest of it still awaits a decision: ${named(decision.rest)}.`)
  );
}

function renderLastDecision(space: PageSpace): string {
  if (space.lastDecision === undefined) return '';
  const { decidedAt, decision } = space.lastDecision;
  return `<p class="last-decision" role="status">Last decision, ${renderTime(decidedAt)}: ${escapeHtml(describeDecision(decision))}</p>`;
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
    renderLastDecision(space) +
    `<h3>Proposals</h3>${proposals}<h3>Last runs</h3>${renderRuns(space)}` +
    `<h3>Memory (${space.activeFacts.length} active fact(s))</h3>${facts}</section>`
  );
}

/** Where the daemon serves the page's script and stylesheet (page-assets.ts). */
export const PAGE_SCRIPT_PATH = '/page.js';
export const PAGE_STYLE_PATH = '/page.css';

/** The whole page; `nonce` is the one script's, as the Content-Security-Policy header names it. */
export function renderPage(spaces: readonly PageSpace[], nonce: string): string {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>dreamd: proposals</title>' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<link rel="stylesheet" href="${PAGE_STYLE_PATH}"></head><body><h1>dreamd</h1>` +
    '<p id="outcome" role="status" aria-live="polite"></p>' +
    (spaces.length === 0 ? '<p>No space is configured.</p>' : spaces.map(renderSpace).join('')) +
    `<script src="${PAGE_SCRIPT_PATH}" nonce="${nonce}"></script></body></html>`
  );
}

/** What the page shows of each configured space (read from its memory folder). */
export async function readPageSpaces(spaces: readonly Space[]): Promise<PageSpace[]> {
  return Promise.all(
    spaces.map(async (space): Promise<PageSpace> => {
      const problems: string[] = [];
      const unreadable: MemoryProblem[] = [];
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
        listProposals(space.memoryDir, space.id, unreadable).catch((error: unknown) => {
          problems.push(`proposals: ${errorMessage(error)}`);
          return [];
        }),
      ]);
      const decided = runs.findLast((run) => run.summary.decision !== undefined);
      return {
        id: space.id,
        approve: space.approve === 'shared' ? 'shared' : space.approve === true,
        activeFacts: facts.slice(0, FACTS_SHOWN),
        runs: runs.slice(-RUNS_SHOWN).reverse(),
        proposals: proposals.map((proposal) => ({ ...viewProposal(proposal), texts: proposal.files })),
        lastDecision:
          decided?.summary.decision === undefined
            ? undefined
            : { decidedAt: decided.committedAt, decision: decided.summary.decision },
        problems: [...problems, ...unreadable.map((problem) => problem.reason)],
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

/**
 * Adds `GET /page` (with its script and stylesheet), `GET /proposals` and the accept and reject routes to the
 * daemon's server.
 */
export function registerPage(app: FastifyInstance, getConfig: () => Config): void {
  const findSpace = (id: string): Space | undefined => getConfig().spaces.find((space) => space.id === id);

  app.get('/page', async (_request, reply) => {
    const nonce = randomBytes(16).toString('base64');
    const html = renderPage(await readPageSpaces(getConfig().spaces), nonce);
    await reply
      .header('content-type', 'text/html; charset=utf-8')
      .header(
        'content-security-policy',
        `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'self'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'`,
      )
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'no-store')
      .send(html);
  });

  // The page's script and stylesheet: the same for every page, so nothing in them is secret or escaped.
  const asset = (contentType: string, body: string) => async (_request: unknown, reply: FastifyReply) =>
    reply
      .header('content-type', contentType)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'no-cache')
      .send(body);
  app.get(PAGE_SCRIPT_PATH, asset('text/javascript; charset=utf-8', PAGE_SCRIPT));
  app.get(PAGE_STYLE_PATH, asset('text/css; charset=utf-8', PAGE_STYLE));

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
