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
  type ProposalView,
} from '../consolidation/proposal.js';
import { errorMessage, LockBusyError } from '../errors.js';
import { listRuns, loadMemory, ProposalNotFoundError, runIdProblem, type RunRecord } from '../space/index.js';

/** Runs listed per space. */
const RUNS_SHOWN = 5;
/** Active fact titles listed per space. */
const FACTS_SHOWN = 50;

/** What the page shows of one space. */
export interface PageSpace {
  readonly id: string;
  readonly approve: boolean;
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

function renderProposal(space: PageSpace, view: ProposalView): string {
  const changes = view.changes.map((change) => {
    const kind = change.kind === 'add' ? 'adds' : change.kind === 'update' ? 'updates' : 'supersedes with';
    const supersedes =
      change.supersedes.length > 0
        ? ` <span class="supersedes">(supersedes ${change.supersedes.map((fact) => `“${escapeHtml(fact.title)}”`).join(', ')})</span>`
        : '';
    return (
      `<li><label><input type="checkbox" name="only" value="${escapeHtml(change.id)}"` +
      `${change.rejected ? ' disabled' : ' checked'}> ${kind} <code>${escapeHtml(change.id)}</code> ` +
      `[${escapeHtml(change.fact.type)}] <strong>${escapeHtml(change.fact.title)}</strong>: ` +
      `${escapeHtml(change.fact.body)}${supersedes}${change.rejected ? ' <em>(rejected)</em>' : ''}</label></li>`
    );
  });
  return (
    `<section class="proposal" data-space="${escapeHtml(space.id)}" data-run="${escapeHtml(view.runId)}">` +
    `<h3>Proposal <code>${escapeHtml(view.runId)}</code></h3>` +
    `<p>Made ${escapeHtml(view.createdAt)} from ${view.sessions.length} session(s); cost ${usd(view.costUsd)}. ` +
    `Files: ${view.files.map((file) => `<code>${escapeHtml(file)}</code>`).join(', ')}</p>` +
    `<ul class="changes">${changes.join('')}</ul>` +
    '<p><button type="button" data-action="accept">Accept selected</button> ' +
    '<button type="button" data-action="reject">Reject selected</button></p>' +
    '<p class="outcome" role="status"></p>' +
    `<details open><summary>Diff</summary><pre class="diff">${escapeHtml(view.diff)}</pre></details>` +
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
    `<p>Approval mode ${space.approve ? 'on: runs propose, you decide' : 'off: runs write memory directly'}.</p>` +
    problems +
    `<h3>Proposals</h3>${proposals}<h3>Last runs</h3>${renderRuns(space)}` +
    `<h3>Memory (${space.activeFacts.length} active fact(s))</h3>${facts}</section>`
  );
}

/** The script of the page: each button sends the checked fact ids of its proposal, then shows the outcome. */
const SCRIPT = `
for (const button of document.querySelectorAll('section.proposal button[data-action]')) {
  button.addEventListener('click', async () => {
    const section = button.closest('section.proposal');
    const outcome = section.querySelector('.outcome');
    const only = [...section.querySelectorAll('input[name="only"]:checked')].map((box) => box.value);
    if (only.length === 0) { outcome.textContent = 'Choose at least one change.'; return; }
    for (const other of section.querySelectorAll('button')) other.disabled = true;
    const url = '/spaces/' + encodeURIComponent(section.dataset.space) + '/proposals/' +
      encodeURIComponent(section.dataset.run) + '/' + button.dataset.action;
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ only }),
        credentials: 'same-origin',
      });
      const body = await response.json();
      if (!response.ok) throw new Error(body.error || response.statusText);
      outcome.textContent = button.dataset.action === 'accept'
        ? 'Accepted ' + body.accepted.join(', ') + '. Reloading…'
        : 'Rejected ' + body.rejected.join(', ') + '. Reloading…';
      setTimeout(() => location.reload(), 300);
    } catch (error) {
      outcome.textContent = 'Refused: ' + error.message;
      for (const other of section.querySelectorAll('button')) other.disabled = false;
    }
  });
}
`;

const STYLE = `
body { font: 15px/1.4 system-ui, sans-serif; margin: 2rem; max-width: 72rem; }
pre.diff { background: #f6f6f6; padding: 0.5rem; overflow-x: auto; }
table.runs td, table.runs th { padding: 0.1rem 0.6rem; text-align: left; }
section.proposal { border: 1px solid #ccc; padding: 0 1rem; margin: 1rem 0; }
.outcome { font-weight: bold; }
.problem { color: #a00; }
`;

/** The whole page; `nonce` is the one script's, as the Content-Security-Policy header names it. */
export function renderPage(spaces: readonly PageSpace[], nonce: string): string {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>dreamd: proposals</title>' +
    `<style nonce="${nonce}">${STYLE}</style></head><body><h1>dreamd</h1>` +
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
        approve: space.approve === true,
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
