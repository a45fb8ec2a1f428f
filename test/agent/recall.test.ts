import { readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createBm25Index, stem, tokenize } from '../../src/search/bm25.js';
import { EmbeddingCacheFile } from '../../src/agent/embeddings.js';
import { createMemoryTools } from '../../src/agent/memory-tools.js';
import { createRecall, createRecallTool, formatRecallResults, searchFacts } from '../../src/agent/recall.js';
import type { Fact } from '../../src/memory/types.js';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../../harness/fake-openai-server.js';
import { recallFact } from './helpers.js';
import { tempDirRemovedAfterTest, useTempDir } from '../support/fixtures.js';

/** Observed the day before it was last updated, so recency and first sight differ. */
const fact: ReturnType<typeof recallFact> = (id, title, body, extra = {}) =>
  recallFact('2026-11-20')(id, title, body, { observed: '2026-11-19', ...extra });

const facts: Fact[] = [
  fact('f-aaaaaaaaaa', 'No spicy food', 'The user does not eat spicy food; avoid chili and hot sauces.'),
  fact('f-bbbbbbbbbb', 'Deploys with Docker', 'The project deploys with docker compose on a single VPS.'),
  fact('f-cccccccccc', 'Prefers pnpm', 'Use pnpm, never npm, for installing packages in this repository.'),
  fact('f-dddddddddd', 'Old editor', 'The user edits code with vim.', {
    status: 'superseded',
    supersededBy: 'f-eeeeeeeeee',
  }),
];

describe('BM25 normalisation', () => {
  it('lower-cases, strips accents, drops stopwords, and keeps each Snowball stem beside its word', () => {
    expect(tokenize('The Cafés are deploying packages')).toEqual([
      'cafe',
      'cafes',
      'deploy',
      'deploying',
      'packag',
      'packages',
    ]);
    expect(stem('berries')).toBe('berri');
    expect(stem('is')).toBe('is');
    expect(stem('moro', 'por')).toBe(stem('mora', 'por'));
  });

  it('scores between 0 and 1, a full match highest', () => {
    const index = createBm25Index(['spicy food', 'docker deploy', 'spicy']);
    const scores = index.score('spicy food');
    expect(scores[0]).toBeGreaterThan(scores[2]!);
    expect(scores[1]).toBe(0);
    for (const score of scores) expect(score).toBeLessThanOrEqual(1);
  });
});

describe('lexical recall (default)', () => {
  it('finds the fact that shares the query words, with id, date and score', async () => {
    const recall = createRecall({ facts });
    expect(recall.mode).toBe('lexical');
    const [best, ...rest] = await recall.recall('is spicy food ok?');
    expect(best).toMatchObject({ id: 'f-aaaaaaaaaa', title: 'No spicy food', date: '2026-11-20' });
    expect(best!.score).toBeGreaterThan(0.2);
    expect(rest).toEqual([]);
  });

  it('answers nothing relevant rather than a weak guess', async () => {
    const recall = createRecall({ facts });
    expect(await recall.recall('favourite colour of the sky at dawn')).toEqual([]);
    const tool = createRecallTool(recall);
    expect(await tool.handler({ query: 'favourite colour of the sky' })).toMatch(
      /^Nothing relevant in memory/,
    );
  });

  it('applies the minimum score and the limit it is given', async () => {
    const recall = createRecall({ facts });
    expect(await recall.recall('docker food', { minScore: 0.9 })).toEqual([]);
    expect(await recall.recall('docker food', { minScore: 0.01, limit: 1 })).toHaveLength(1);
  });

  it('never returns a superseded fact', async () => {
    expect(await createRecall({ facts }).recall('vim editor', { minScore: 0 })).toEqual([]);
  });

  it('reads a memory directory fresh each time, including notes the agent just wrote', async () => {
    const memoryDir = tempDirRemovedAfterTest('recall-dir');
    const recall = createRecall({ memoryDir });
    expect(await recall.recall('spicy food')).toEqual([]);
    await createMemoryTools({ memoryDir }).writeMemory.handler({
      type: 'user',
      title: 'Food',
      body: 'The user does not eat spicy food.',
    });
    const [hit] = await recall.recall('spicy food');
    expect(hit).toMatchObject({ id: expect.stringMatching(/^f-[a-z2-7]{10}$/), title: 'Food' });
    expect(hit!.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });
});

describe('recall by meaning without an embeddings endpoint: stems of each language', () => {
  const notes: Fact[] = [
    fact('f-lisboa0001', 'Onde mora', 'O usuário mora em Lisboa, perto do Cais do Sodré.'),
    fact('f-vive000001', 'Dónde vive', 'La usuaria vive en Sevilla desde 2019.'),
    fact('f-order00001', 'Usual order', 'The customer ordered two bags of Colombian beans last week.'),
  ];

  it('finds "mora em Lisboa" for "onde eu moro?"', async () => {
    expect((await createRecall({ facts: notes }).recall('onde eu moro?'))[0]?.id).toBe('f-lisboa0001');
  });

  it('finds "vive en Sevilla" for "¿dónde vivo?"', async () => {
    expect((await createRecall({ facts: notes }).recall('¿dónde vivo?'))[0]?.id).toBe('f-vive000001');
  });

  it("finds the lesson's restaurant note for a request that only names a restaurant", async () => {
    const spicy = fact(
      'f-spicy00001',
      'No spicy food',
      'The user does not eat spicy food. Avoid spicy cuisines when recommending restaurants.',
    );
    const found = await createRecall({ facts: [spicy, ...notes] }).recall(
      'Can you recommend a good restaurant nearby?',
    );
    expect(found[0]?.id).toBe('f-spicy00001');
  });

  it('finds "ordered" for "what does the customer usually order?"', async () => {
    expect(
      (await createRecall({ facts: notes }).recall('what does the customer usually order?'))[0]?.id,
    ).toBe('f-order00001');
  });
});

describe('recall beyond English', () => {
  const memory: Fact[] = [
    fact('f-nome000001', 'Nome do usuário', 'O usuário se chama João e mora em Lisboa.'),
    fact('f-comida0001', 'Comida preferida', 'O João adora bacalhau com natas.'),
    fact('f-name000001', '用户的名字', '用户叫张伟，住在上海。'),
    fact('f-tea0000001', '喜欢的饮料', '张伟每天喝绿茶。'),
    fact('f-nombre0001', 'Nombre del usuario', 'El usuario se llama Lucía.'),
    ...facts,
  ];

  it('answers "Você sabe meu nome?" with the name, which the old 0.2 floor hid', async () => {
    const [best] = await createRecall({ facts: memory }).recall('Você sabe meu nome?');
    expect(best).toMatchObject({ id: 'f-nome000001' });
    expect(tokenize('Você sabe meu nome?')).toEqual(['sab', 'sabe', 'nom', 'nome']);
  });

  it('answers the same question in Chinese, split into character pairs', async () => {
    const results = await createRecall({ facts: memory }).recall('你知道我的名字吗？');
    expect(results[0]).toMatchObject({ id: 'f-name000001' });
    expect(tokenize('名字是')).toEqual(['名字', '字是']);
    expect((await createRecall({ facts: memory }).recall('绿茶'))[0]?.id).toBe('f-tea0000001');
  });

  it('answers in Spanish, with Spanish stop words dropped and accents folded', async () => {
    expect((await createRecall({ facts: memory }).recall('¿Cómo se llama el usuario?'))[0]?.id).toBe(
      'f-nombre0001',
    );
    expect(tokenize('¿Sabes cómo me llamo?')).toEqual(['sab', 'sabes', 'llam', 'llamo']);
  });

  it('keeps English behaviour: stop words and stemming', async () => {
    expect(tokenize('deploying packages')).toEqual(['deploy', 'deploying', 'packag', 'packages']);
    expect((await createRecall({ facts: memory }).recall('is spicy food ok?')).map((hit) => hit.id)).toEqual([
      'f-aaaaaaaaaa',
    ]);
  });

  it('flags a weak best match instead of hiding it, and drops what is weak next to the best', async () => {
    const results = await createRecall({ facts: memory }).recall('onde mora o João hoje em dia');
    expect(results[0]).toMatchObject({ id: 'f-nome000001' });
    const weakest = results.at(-1)!;
    expect(weakest.score).toBeGreaterThanOrEqual(0.25 * results[0]!.score);
    const lone = await createRecall({ facts: memory }).recall('Lisboa weather forecast tomorrow morning');
    expect(lone.map((hit) => [hit.id, hit.weak])).toEqual([['f-nome000001', true]]);
    expect(formatRecallResults('Lisboa', lone)).toMatch(/weak match/);
  });

  it('exports the same search over facts for the consolidation side', () => {
    const hits = searchFacts(memory, 'nome do usuário João', { limit: 2 });
    expect(hits[0]?.fact.id).toBe('f-nome000001');
    expect(hits.length).toBeLessThanOrEqual(2);
    expect(searchFacts(memory, 'vim editor')).toEqual([]); // superseded facts are never found
  });
});

/**
 * A small deterministic embedding: a bag of concepts where synonyms share a dimension, so "chili" and
 * "spicy" point the same way while sharing no letters.
 */
const CONCEPTS: Record<string, number> = {
  spicy: 0,
  chili: 0,
  hot: 0,
  peppery: 0,
  pepper: 0,
  food: 1,
  dish: 1,
  dishes: 1,
  meal: 1,
  eat: 1,
  cuisine: 1,
  restaurant: 1,
  docker: 2,
  container: 2,
  containers: 2,
  deploy: 3,
  deploys: 3,
  ship: 3,
  release: 3,
  pnpm: 4,
  npm: 4,
  package: 4,
  packages: 4,
  installing: 4,
  install: 4,
};
function conceptEmbedding(text: string): number[] {
  const vector = new Array<number>(8).fill(0);
  for (const word of text.toLowerCase().split(/[^a-z]+/)) {
    const dimension = CONCEPTS[word];
    if (dimension !== undefined) vector[dimension]! += 1;
  }
  return vector;
}

describe('embeddings recall against an OpenAI-compatible /v1/embeddings', () => {
  let server: FakeOpenAIServer;
  const temp = useTempDir('recall-embeddings');
  let memoryDir: string;
  beforeAll(async () => {
    server = await startFakeOpenAIServer({ embed: conceptEmbedding });
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(async () => {
    memoryDir = temp.path;
    server.embeddingRequests.length = 0;
  });

  const config = () => ({ baseUrl: server.url, model: 'concepts-8' });

  it('finds a fact phrased with other words, which lexical recall misses', async () => {
    const facts = [
      fact('f-aaaaaaaaaa', 'Heat', 'Nothing peppery or chili for this user.'),
      fact('f-bbbbbbbbbb', 'Shipping', 'Containers are how we release.'),
    ];
    expect(await createRecall({ facts }).recall('spicy dishes')).toEqual([]);
    const recall = createRecall({ facts, embeddings: config(), cacheDir: path.join(memoryDir, '.dreamd') });
    expect(recall.mode).toBe('embeddings');
    const results = await recall.recall('spicy dishes');
    expect(results.map((result) => result.id)).toEqual(['f-aaaaaaaaaa']);
    expect(results[0]!.score).toBeGreaterThan(0.3);
    expect((await recall.recall('how do we ship docker')).map((result) => result.id)).toEqual([
      'f-bbbbbbbbbb',
    ]);
  });

  it('refuses a weak match', async () => {
    const recall = createRecall({ facts, embeddings: config(), cacheDir: memoryDir });
    expect(await recall.recall('what is the weather like')).toEqual([]);
  });

  it('caches fact vectors on disk and embeds again only the fact that changed', async () => {
    const cacheDir = path.join(memoryDir, '.dreamd');
    const first = createRecall({ facts, embeddings: config(), cacheDir });
    await first.recall('spicy food');
    const inputsFirst = server.embeddingRequests.flatMap((request) => request.inputs);
    expect(inputsFirst).toHaveLength(4); // three active facts + the query

    const cache = EmbeddingCacheFile.parse(
      JSON.parse(await readFile(path.join(cacheDir, 'embeddings.json'), 'utf8')),
    );
    expect(Object.keys(cache.entries).sort()).toEqual(['f-aaaaaaaaaa', 'f-bbbbbbbbbb', 'f-cccccccccc']);
    expect(cache.model).toBe('concepts-8');

    server.embeddingRequests.length = 0;
    const changed = facts.map((item) =>
      item.id === 'f-bbbbbbbbbb' ? { ...item, body: 'We deploy with containers now.' } : item,
    );
    const second = createRecall({ facts: changed, embeddings: config(), cacheDir }); // a new process, same cache
    await second.recall('spicy food');
    expect(server.embeddingRequests.flatMap((request) => request.inputs)).toEqual([
      'Deploys with Docker\nWe deploy with containers now.',
      'spicy food',
    ]);
  });

  it('ignores an unreadable cache or one made with another model, and rebuilds it', async () => {
    const cacheDir = path.join(memoryDir, '.dreamd');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(cacheDir, { recursive: true });
    await writeFile(
      path.join(cacheDir, 'embeddings.json'),
      '{"version":1,"model":"other","entries":{"f-aaaaaaaaaa":{"hash":"x","vector":[1]}}}',
    );
    const recall = createRecall({ facts, embeddings: config(), cacheDir });
    expect((await recall.recall('chili dish'))[0]?.id).toBe('f-aaaaaaaaaa');
    await writeFile(path.join(cacheDir, 'embeddings.json'), 'not json');
    expect((await createRecall({ facts, embeddings: config(), cacheDir }).recall('chili dish'))[0]?.id).toBe(
      'f-aaaaaaaaaa',
    );
    const cache = EmbeddingCacheFile.parse(
      JSON.parse(await readFile(path.join(cacheDir, 'embeddings.json'), 'utf8')),
    );
    expect(cache.model).toBe('concepts-8');
  });

  it('keeps its cache under the space .dreamd directory by default', async () => {
    await createMemoryTools({ memoryDir }).writeMemory.handler({
      type: 'user',
      title: 'Food',
      body: 'No chili please.',
    });
    const recall = createRecall({ memoryDir, embeddings: config() });
    const [hit] = await recall.recall('spicy meal');
    expect(hit?.title).toBe('Food');
    const cache = JSON.parse(await readFile(path.join(memoryDir, '.dreamd', 'embeddings.json'), 'utf8'));
    expect(Object.keys(cache.entries)).toEqual([hit!.id]);
  });
});

/** Runs `use` with two fresh memory folders, a shop's and a repository's, removed when the test finishes. */
async function inTwoSpaces(use: (shop: string, repo: string) => Promise<void>): Promise<void> {
  await use(tempDirRemovedAfterTest('space-shop'), tempDirRemovedAfterTest('space-repo'));
}

describe('spaces', () => {
  it('never mix: each recall reads only its own memory directory', async () => {
    await inTwoSpaces(async (shop, repo) => {
      const note = { type: 'user' } as const;
      await createMemoryTools({ memoryDir: shop }).writeMemory.handler({
        ...note,
        title: 'Food',
        body: 'Customer loves spicy ramen.',
      });
      await createMemoryTools({ memoryDir: repo }).writeMemory.handler({
        ...note,
        title: 'Stack',
        body: 'Repository uses pnpm workspaces.',
      });
      const shopRecall = createRecall({ memoryDir: shop });
      const repoRecall = createRecall({ memoryDir: repo });
      expect((await shopRecall.recall('spicy ramen')).map((result) => result.title)).toEqual(['Food']);
      expect(await repoRecall.recall('spicy ramen')).toEqual([]);
      expect(await shopRecall.recall('pnpm workspaces')).toEqual([]);
      expect((await repoRecall.recall('pnpm workspaces')).map((result) => result.title)).toEqual(['Stack']);
    });
  });

  it('searches the curated topic files of its own space, and not a topic file symlinked to another space', async () => {
    await inTwoSpaces(async (shop, repo) => {
      const topic =
        '---\nname: User\ndescription: who the user is\ntype: user\n---\n\n## Loves ramen\nCustomer loves tonkotsu ramen.\n';
      await writeFile(path.join(shop, 'user.md'), topic);
      await symlink(path.join(shop, 'user.md'), path.join(repo, 'user.md'));
      const [hit] = await createRecall({ memoryDir: shop }).recall('tonkotsu ramen');
      expect(hit).toMatchObject({ title: 'Loves ramen', text: 'Customer loves tonkotsu ramen.' });
      expect(hit!.id).toMatch(/^f-[a-z0-9]{10}$/);
      expect(await createRecall({ memoryDir: repo }).recall('tonkotsu ramen', { minScore: 0 })).toEqual([]);
      expect(await createRecall({ memoryDir: path.join(repo, 'missing') }).recall('ramen')).toEqual([]);
    });
  });

  it('does not follow a symlink planted towards another space', async () => {
    await inTwoSpaces(async (shop, repo) => {
      await writeFile(path.join(shop, 'secret.md'), 'Customer card ends in 4242, loves ramen.');
      await symlink(path.join(shop, 'secret.md'), path.join(repo, 'linked.md'));
      expect(await createRecall({ memoryDir: repo }).recall('ramen card', { minScore: 0 })).toEqual([]);
    });
  });
});
