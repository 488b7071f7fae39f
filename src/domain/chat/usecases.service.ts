import type { Caller } from '../caller.js';
import { Errors } from '../errors.js';
import type { Clock } from '../ports.js';
import { filterExpression, parseFields } from '../shared/filter/index.js';
import type { ClientsRepository } from './clients.repository.js';
import { assertClientAccess, visibleClient } from '../shared/access.js';
import type { SentencesRepository } from './sentences.repository.js';
import { USECASE_COLUMNS, type UsecaseColumns, type UsecaseRow, type UsecasesRepository } from './usecases.repository.js';

export type { UsecaseRow };

export interface UsecaseQuery {
  userId?: number;
  changedSince?: Date;
  clientId?: number;
  fields?: string;
  where?: string;
  tz: string;
}

/** The scenario fields a client sets (`data` of POST/PATCH /usecase); absent ones stay as they are. */
export interface UsecaseFields {
  description?: string;
  welcome?: string;
  startAt?: Date;
  finishAt?: Date | null;
  wordsForManual?: string;
  wordsForAttention?: string;
  timeoutForAutoMsg?: number;
  autoMsg?: string;
  manualMessage?: string;
  temperature?: number;
  /** Tokens one chat may use, prompt and replies (0: no limit). */
  tokenBudget?: number;
  /** The assistant is offered the forecast tools over the chat user's own jobs. */
  modelTools?: boolean;
}

function usecaseColumns(fields: UsecaseFields | undefined): UsecaseColumns {
  if (fields === undefined) return {};
  const columns: UsecaseColumns = {
    description: fields.description,
    welcome: fields.welcome,
    start_at: fields.startAt,
    finish_at: fields.finishAt,
    words_for_manual: fields.wordsForManual,
    words_for_attention: fields.wordsForAttention,
    timeout_for_auto_msg: fields.timeoutForAutoMsg,
    auto_msg: fields.autoMsg,
    manual_message: fields.manualMessage,
    temperature: fields.temperature,
    token_budget: fields.tokenBudget,
    model_tools: fields.modelTools,
  };
  return Object.fromEntries(Object.entries(columns).filter(([, v]) => v !== undefined));
}

/** Why a use case takes no new chat sentences, or null when it does. */
export function usecaseClosedReason(usecase: UsecaseRow, now: Date): string | null {
  if (!usecase.is_active) return `Use case ${usecase.id} is inactive`;
  if (usecase.finish_at !== null && usecase.finish_at.getTime() <= now.getTime()) return `Use case ${usecase.id} is closed`;
  if (usecase.start_at.getTime() > now.getTime()) return `Use case ${usecase.id} has not started yet`;
  return null;
}

export function createUsecasesService(deps: {
  usecases: UsecasesRepository;
  sentences: SentencesRepository;
  clients: ClientsRepository;
  clock: Clock;
}) {
  const { usecases, sentences, clients, clock } = deps;

  async function visibleUsecase(caller: Caller, id: number): Promise<UsecaseRow> {
    const usecase = await usecases.findById(id);
    if (!usecase) throw Errors.notFound('Use case', id);
    assertClientAccess(caller, usecase.client_id, 'Use case', id);
    return usecase;
  }

  return {
    visibleUsecase,

    /**
     * Three ways in, as the legacy front end polls: the use cases of a user's client changed since a
     * date, those of one client, or any the caller may see filtered by `where`.
     */
    async list(caller: Caller, query: UsecaseQuery): Promise<{ rows: UsecaseRow[]; fields: string[] }> {
      const fields = parseFields(query.fields, USECASE_COLUMNS);
      const where = filterExpression(query.where, USECASE_COLUMNS, { parameter: 'where', tz: query.tz });
      const scope = visibleClient(caller);
      if (query.userId !== undefined) {
        if (!query.changedSince) throw Errors.missingParameter('upd_date');
        const member = await clients.memberClientOf(query.userId);
        if (!member || (scope !== undefined && member.client_id !== scope)) throw Errors.notFound('User', query.userId);
        if (member.client_id === null) return { rows: [], fields };
        return { rows: await usecases.list({ clientId: member.client_id, changedSince: query.changedSince, where }), fields };
      }
      if (query.clientId !== undefined) {
        if (scope !== undefined && scope !== query.clientId) throw Errors.notFound('Client', query.clientId);
        return { rows: await usecases.list({ clientId: query.clientId, changedSince: query.changedSince, where }), fields };
      }
      return { rows: await usecases.list({ onlyClientId: scope, changedSince: query.changedSince, where }), fields };
    },

    async create(caller: Caller, clientId: number, fields: UsecaseFields): Promise<number> {
      const client = await clients.findById(clientId);
      if (!client) throw Errors.notFound('Client', clientId);
      assertClientAccess(caller, clientId, 'Client', clientId);
      return usecases.insert({ ...usecaseColumns(fields), client_id: clientId, user_id: caller.userId }, clock.now());
    },

    async patch(caller: Caller, id: number, change: { fields?: UsecaseFields; close?: boolean; open?: boolean; active?: boolean }): Promise<void> {
      await visibleUsecase(caller, id);
      if (change.close && change.open) throw Errors.invalidParameter('close', "cannot be given together with 'open'");
      const now = clock.now();
      const patch: UsecaseColumns & { is_active?: boolean } = usecaseColumns(change.fields);
      if (change.close) patch.finish_at = now;
      if (change.open) patch.finish_at = null;
      if (change.active !== undefined) patch.is_active = change.active;
      if (Object.keys(patch).length === 0) throw Errors.missingParameter('data');
      await usecases.update(id, patch, now);
    },

    /** Links every sentence to every use case named; answers how many links were made. */
    async linkSentences(caller: Caller, usecaseIds: number[], sentenceIds: number[], position: number | undefined): Promise<number> {
      const targets = await Promise.all(usecaseIds.map((id) => visibleUsecase(caller, id)));
      const found = await sentences.findMany(sentenceIds);
      for (const id of sentenceIds) {
        const sentence = found.find((s) => s.id === id);
        if (!sentence) throw Errors.notFound('Sentence', id);
        for (const usecase of targets) {
          if (sentence.client_id !== usecase.client_id) throw Errors.notFound('Sentence', id);
        }
      }
      let linked = 0;
      for (const usecase of targets) linked += await usecases.linkSentences(usecase.id, sentenceIds, position, clock.now());
      return linked;
    },

    async unlinkSentences(caller: Caller, usecaseIds: number[], sentenceIds: number[], subtractTokens: boolean): Promise<void> {
      const targets = await Promise.all(usecaseIds.map((id) => visibleUsecase(caller, id)));
      let removed = 0;
      for (const usecase of targets) removed += await usecases.unlinkSentences(usecase.id, sentenceIds, subtractTokens, clock.now());
      if (removed === 0) throw Errors.notFound(`Sentence ${sentenceIds.join(',')} in use case ${usecaseIds.join(',')}`);
    },

    async moveSentence(caller: Caller, usecaseId: number, position: number, direction: 'Up' | 'Down'): Promise<void> {
      await visibleUsecase(caller, usecaseId);
      const outcome = await usecases.moveSentence(usecaseId, position, direction, clock.now());
      if (outcome === 'no_sentence') throw Errors.notFound(`Sentence at position ${position} of use case ${usecaseId}`);
      if (outcome === 'at_edge') {
        throw Errors.wrongState(`The sentence at position ${position} is already the ${direction === 'Up' ? 'first' : 'last'} of use case ${usecaseId}`);
      }
    },
  };
}

export type UsecasesService = ReturnType<typeof createUsecasesService>;
