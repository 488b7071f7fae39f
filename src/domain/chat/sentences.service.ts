import type { Caller } from '../caller.js';
import { Errors } from '../errors.js';
import type { Clock } from '../ports.js';
import { filterExpression, parseFields } from '../shared/filter/index.js';
import type { TokenCounter } from '../../llm/tokens.js';
import { assertClientAccess, requireOwnClient, visibleClient } from '../shared/access.js';
import { SENTENCE_COLUMNS, USECASE_SENTENCE_COLUMNS, type SentenceRow, type SentencesRepository, type UsecaseSentenceRow } from './sentences.repository.js';
import type { UsecasesRepository } from './usecases.repository.js';
import type { UsecasesService } from './usecases.service.js';

export type { SentenceRow, UsecaseSentenceRow };

export function createSentencesService(deps: {
  sentences: SentencesRepository;
  usecases: UsecasesRepository;
  usecasesService: UsecasesService;
  tokens: TokenCounter;
  clock: Clock;
}) {
  const { sentences, usecases, usecasesService, tokens, clock } = deps;

  return {
    /** The sentences of the caller's client (every client's for administrators), filtered by `where`. */
    async list(caller: Caller, query: { fields?: string; where?: string; tz: string }): Promise<{ rows: SentenceRow[]; fields: string[] }> {
      const fields = parseFields(query.fields, SENTENCE_COLUMNS);
      const where = filterExpression(query.where, SENTENCE_COLUMNS, { parameter: 'where', tz: query.tz });
      return { rows: await sentences.list({ onlyClientId: visibleClient(caller), where }), fields };
    },

    /** A use case's system sentences in prompt order. */
    async listForUsecase(caller: Caller, usecaseId: number, query: { fields?: string; where?: string; tz: string }): Promise<{ rows: UsecaseSentenceRow[]; fields: string[] }> {
      await usecasesService.visibleUsecase(caller, usecaseId);
      const fields = parseFields(query.fields, USECASE_SENTENCE_COLUMNS);
      const where = filterExpression(query.where, USECASE_SENTENCE_COLUMNS, { parameter: 'where', tz: query.tz });
      return { rows: await sentences.listForUsecase(usecaseId, where), fields };
    },

    /**
     * A free sentence of the caller's client, or (with a use case) one appended to its prompt;
     * `addTokens` adds the sentence's token count to the use case's `Tokens`.
     */
    async create(caller: Caller, input: { text: string; usecaseId?: number; addTokens: boolean }): Promise<number> {
      const count = await tokens.count(input.text);
      if (input.usecaseId !== undefined) {
        const usecase = await usecasesService.visibleUsecase(caller, input.usecaseId);
        return usecases.insertLinkedSentence(usecase.id, { client_id: usecase.client_id, text: input.text, tokens: count }, input.addTokens, clock.now());
      }
      return sentences.insert({ client_id: requireOwnClient(caller), text: input.text, tokens: count }, clock.now());
    },

    /** New text (and token count); use cases that hold the sentence count as changed for pollers. */
    async patchText(caller: Caller, id: number, text: string): Promise<void> {
      const sentence = await sentences.findById(id);
      if (!sentence) throw Errors.notFound('Sentence', id);
      assertClientAccess(caller, sentence.client_id, 'Sentence', id);
      const now = clock.now();
      await sentences.updateText(id, text, await tokens.count(text), now);
      await usecases.touch(await usecases.usecasesUsingSentence(id), now);
    },
  };
}

export type SentencesService = ReturnType<typeof createSentencesService>;
