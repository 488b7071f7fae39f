import type { ControlType, SentenceRole, ToolTurn } from '../../db/tables/chat.js';
import type { LlmMessage, LlmProvider, LlmRole } from '../../llm/provider.js';
import type { TokenCounter } from '../../llm/tokens.js';
import { isAdmin, type Caller } from '../caller.js';
import { Errors, isAppError } from '../errors.js';
import type { ConsumptionsService } from '../consumptions/consumptions.service.js';
import type { Clock, EventLog } from '../ports.js';
import { filterExpression, parseFields } from '../shared/filter/index.js';
import { CHAT_COLUMNS, type ChatChanges, type ChatRow, type ChatsRepository, type Handoff, type HandoffCounts, type SaidSentence } from './chats.repository.js';
import type { ClientsRepository } from './clients.repository.js';
import type { ClientsService } from './clients.service.js';
import { assertClientAccess, visibleClient } from '../shared/access.js';
import { CHAT_SENTENCE_COLUMNS, type ChatSentenceRow, type SentencesRepository } from './sentences.repository.js';
import type { UsecaseRow, UsecasesRepository } from './usecases.repository.js';
import { usecaseClosedReason } from './usecases.service.js';
import { firstListedWord } from './words.js';
import { MAX_TOOL_CALLS, MAX_TOOL_ROUNDS, MODEL_TOOLS, TOO_MANY_TOOL_CALLS, modelToolScope, runModelTool, type ModelToolScope, type ModelToolsDeps } from './model-tools.js';

export type { ChatRow, ChatSentenceRow };

/** Stored tool turns back as the assistant's call and the tools' answers, in the OpenAI order. */
const toolMessages = (turns: ToolTurn[]): LlmMessage[] => [
  { role: 'assistant', content: '', toolCalls: turns.map(({ id, name, arguments: args }) => ({ id, name, arguments: args })) },
  ...turns.map((t): LlmMessage => ({ role: 'tool', toolCallId: t.id, content: t.result })),
];

/**
 * Tokens one exchange may use, prompt and reply together: the legacy default of `max_tokens`. The
 * reply's limit is what the prompt leaves of it; the oldest turns are dropped when the prompt alone
 * would not leave room for a useful reply.
 */
export const CHAT_TOKEN_BUDGET = 4000;
const MIN_REPLY_TOKENS = 64;

const ROLE_NAMES: Record<SentenceRole, LlmRole> = { 0: 'system', 1: 'user', 2: 'assistant' };

export interface ChatQuery {
  userId?: number;
  hash?: string;
  changedSince?: Date;
  chatIds?: number[];
  fields?: string;
  where?: string;
  tz: string;
}

export interface ChatPatch {
  finish?: boolean;
  status?: string;
  control?: ControlType;
  /** Operator managing the chat; null releases it. */
  managingUserId?: number | null;
  tokens?: number;
  active?: boolean;
}

export interface NewChatSentence {
  chatId: number;
  text: string;
  role: SentenceRole;
  rate: 0 | 1;
  userId?: number;
}

export function createChatsService(deps: {
  chats: ChatsRepository;
  sentences: SentencesRepository;
  usecases: UsecasesRepository;
  clients: ClientsRepository;
  clientsService: ClientsService;
  consumptions: ConsumptionsService;
  llm: LlmProvider;
  tokens: TokenCounter;
  model: string;
  clock: Clock;
  events: EventLog;
  /** The areas the forecast tools read (use cases with ModelTools=1); without them no tools are offered. */
  modelTools?: ModelToolsDeps;
}) {
  const { chats, sentences, usecases, clients, clientsService, consumptions, llm, tokens, model, clock, events, modelTools } = deps;

  async function visibleChat(caller: Caller, id: number): Promise<ChatRow> {
    const chat = await chats.findById(id);
    if (!chat) throw Errors.notFound('Chat', id);
    assertClientAccess(caller, chat.client_id, 'Chat', id);
    return chat;
  }

  /** A user named in a request must exist and, for consumers, work in the same client. */
  async function checkUser(caller: Caller, userId: number, clientId: number, parameter: string): Promise<void> {
    if (userId === caller.userId) return;
    const member = await clients.memberClientOf(userId);
    if (!member || (!isAdmin(caller) && member.client_id !== clientId)) {
      throw Errors.invalidParameter(parameter, `user ${userId} does not exist or is not a member of client ${clientId}`);
    }
  }

  /** Schedulers of this process, told of each new silence deadline once it is stored. */
  const dueListeners = new Set<(due: Date) => void>();
  const announceDue = (due: Date | null) => {
    if (due) for (const listener of dueListeners) listener(due);
  };

  const silenceDeadline = (usecase: UsecaseRow, from: Date): Date | null =>
    usecase.timeout_for_auto_msg > 0 && usecase.auto_msg.trim() !== '' ? new Date(from.getTime() + usecase.timeout_for_auto_msg * 1000) : null;

  /**
   * System sentences in order, then the history, then the new user sentence; trimmed to the budget. With
   * `withTools`, an assistant sentence is preceded by the tool calls and results behind it, so a later turn
   * knows what was looked up (a sentence and its tool turns are kept or dropped together).
   */
  async function buildPrompt(chat: ChatRow, userText: string, withTools = false): Promise<{ messages: LlmMessage[]; maxTokens: number; promptTokens: number }> {
    const system = (await sentences.listForUsecase(chat.usecase_id)).map((s): LlmMessage => ({ role: 'system', content: s.text }));
    const history = (await sentences.listForChat(chat.id)).map((s): LlmMessage[] => [
      ...(withTools && s.tool_calls?.length ? toolMessages(s.tool_calls) : []),
      { role: ROLE_NAMES[s.role], content: s.text },
    ]);
    const latest: LlmMessage = { role: 'user', content: userText };
    for (let dropped = 0; dropped <= history.length; dropped++) {
      const messages = [...system, ...history.slice(dropped).flat(), latest];
      const used = await tokens.countMessages(messages);
      if (CHAT_TOKEN_BUDGET - used >= MIN_REPLY_TOKENS) return { messages, maxTokens: CHAT_TOKEN_BUDGET - used, promptTokens: used };
    }
    throw Errors.wrongState(
      `The use case's sentences and this sentence leave no room for a reply within the ${CHAT_TOKEN_BUDGET}-token budget; shorten them`,
    );
  }

  async function reportProviderFailure(chat: ChatRow, error: unknown): Promise<void> {
    const reason = isAppError(error) ? error.message : 'unexpected failure';
    await events.record({ type: 3, procedure: 'chat.reply', text: `Chat ${chat.id}: ${reason}` }).catch(() => undefined);
  }

  const service = {
    visibleChat,

    async list(caller: Caller, query: ChatQuery): Promise<{ rows: ChatRow[]; fields: string[] }> {
      const fields = parseFields(query.fields, CHAT_COLUMNS);
      const where = filterExpression(query.where, CHAT_COLUMNS, { parameter: 'where', tz: query.tz });
      const rows = await chats.list({
        onlyClientId: visibleClient(caller),
        userId: query.userId,
        hash: query.hash,
        changedSince: query.changedSince,
        ids: query.chatIds,
        where,
      });
      return { rows, fields };
    },

    /** A new chat on an open use case; its Welcome becomes the first assistant sentence. */
    async create(caller: Caller, input: { usecaseId: number; userId: number; hash?: string }): Promise<number> {
      const usecase = await usecases.findById(input.usecaseId);
      if (!usecase) throw Errors.notFound('Use case', input.usecaseId);
      assertClientAccess(caller, usecase.client_id, 'Use case', input.usecaseId);
      const now = clock.now();
      const closed = usecaseClosedReason(usecase, now);
      if (closed) throw Errors.wrongState(`${closed}: it takes no new chats`);
      await checkUser(caller, input.userId, usecase.client_id, 'user_id');
      const welcome = usecase.welcome.trim() === '' ? undefined : { client_id: usecase.client_id, text: usecase.welcome, tokens: await tokens.count(usecase.welcome) };
      const due = silenceDeadline(usecase, now);
      const id = await chats.insert({ usecase_id: usecase.id, user_id: input.userId, hash: input.hash ?? null, auto_msg_due_at: due }, welcome, now);
      announceDue(due);
      return id;
    },

    async patch(caller: Caller, id: number, patch: ChatPatch): Promise<void> {
      const chat = await visibleChat(caller, id);
      const now = clock.now();
      const changes: ChatChanges = {};
      if (patch.finish) {
        if (chat.finish_at === null) changes.finish_at = now;
        changes.auto_msg_due_at = null;
      }
      if (patch.status !== undefined) changes.status = patch.status;
      if (patch.control !== undefined) {
        changes.control_type = patch.control;
        if (patch.control === 'manual') changes.auto_msg_due_at = null;
        if (patch.control === 'manual' && chat.control_type === 'auto') {
          changes.handoffs = [{ event: 'manual', reason: 'operator', user_id: patch.managingUserId ?? caller.userId }];
        }
      }
      if (patch.managingUserId !== undefined) {
        if (patch.managingUserId !== null) await checkUser(caller, patch.managingUserId, chat.client_id, 'user');
        changes.user_managing_id = patch.managingUserId;
      }
      if (patch.tokens) changes.add_tokens = patch.tokens;
      if (patch.active !== undefined) changes.is_active = patch.active;
      if (Object.keys(changes).length === 0 && !patch.finish) throw Errors.missingParameter('finish, status, control, user, tokens or active');
      await chats.update(id, changes, now);
    },

    /**
     * A sentence said in a chat. A user sentence (role 1) in an automatic chat gets the assistant's
     * reply before this returns; both are stored together only once the provider has answered, so a
     * provider failure leaves the chat as it was. Answers the id of the posted sentence.
     */
    async say(caller: Caller, input: NewChatSentence): Promise<number> {
      const chat = await visibleChat(caller, input.chatId);
      if (chat.finish_at !== null) throw Errors.wrongState(`Chat ${chat.id} is finished: it takes no new sentences`);
      const usecase = await usecases.findById(chat.usecase_id);
      if (!usecase) throw Errors.notFound('Use case', chat.usecase_id);
      const now = clock.now();
      const authorId = input.userId ?? caller.userId;
      await checkUser(caller, authorId, chat.client_id, 'user_id');
      const posted: SaidSentence = { text: input.text, tokens: await tokens.count(input.text), role: input.role, rate: input.rate, user_id: authorId };

      if (input.role !== 1) {
        // An operator's answer (role 2) makes it the chat's manager unless one is set already.
        const changes: ChatChanges = input.role === 2 && chat.user_managing_id === null ? { user_managing_id: caller.userId } : {};
        const [id] = await chats.record(chat.id, chat.client_id, [posted], changes, now);
        return id!;
      }

      const closed = usecaseClosedReason(usecase, now);
      if (closed) throw Errors.wrongState(`${closed}: it takes no new user sentences`);
      const attentionWord = firstListedWord(input.text, usecase.words_for_attention);
      const base: ChatChanges =
        attentionWord !== null && !chat.needs_attention ? { needs_attention: true, handoffs: [{ event: 'attention', reason: 'word', word: attentionWord }] } : {};

      if (chat.control_type === 'manual') {
        const [id] = await chats.record(chat.id, chat.client_id, [posted], base, now);
        return id!;
      }

      /** To a person: the ManualMessage (when set) answers, automatic replies stop, the reason is kept. */
      const handOff = async (handoff: Handoff): Promise<number> => {
        const said = [posted];
        if (usecase.manual_message.trim() !== '') {
          said.push({ text: usecase.manual_message, tokens: await tokens.count(usecase.manual_message), role: 2, rate: null, user_id: null });
        }
        const changes: ChatChanges = { ...base, control_type: 'manual', auto_msg_due_at: null, handoffs: [...(base.handoffs ?? []), handoff] };
        const [id] = await chats.record(chat.id, chat.client_id, said, changes, now);
        return id!;
      };

      const manualWord = firstListedWord(input.text, usecase.words_for_manual);
      if (manualWord !== null) return handOff({ event: 'manual', reason: 'word', word: manualWord });

      const tools = usecase.model_tools && chat.user_id !== null && modelTools ? MODEL_TOOLS : undefined;
      const prompt = await buildPrompt(chat, input.text, tools !== undefined);
      const messages = [...prompt.messages];
      let maxTokens = prompt.maxTokens;
      if (usecase.token_budget > 0) {
        // The chat's tokens after this reply (provider totals so far, this prompt, the reply) must fit the budget.
        const left = usecase.token_budget - chat.tokens - prompt.promptTokens;
        if (left < MIN_REPLY_TOKENS) return handOff({ event: 'manual', reason: 'budget' });
        maxTokens = Math.min(maxTokens, left);
      }
      const apiKey = await clientsService.providerKeyOf(chat.client_id);
      // Every round's tokens count: the tool turns are part of this reply's cost.
      const usage = { prompt: 0, completion: 0, total: 0 };
      const turns: ToolTurn[] = [];
      let scope: ModelToolScope | undefined;
      let ran = 0;
      let reply;
      try {
        for (let round = 0; ; round++) {
          const toolChoice = round < MAX_TOOL_ROUNDS && ran < MAX_TOOL_CALLS ? 'auto' : 'none';
          reply = await llm.complete({ apiKey, model, messages, temperature: usecase.temperature, maxTokens, ...(tools ? { tools, toolChoice } : {}) });
          usage.prompt += reply.usage.prompt;
          usage.completion += reply.usage.completion;
          usage.total += reply.usage.total;
          if (!tools || reply.toolsRefused || !reply.toolCalls?.length || toolChoice === 'none') break;
          messages.push({ role: 'assistant', content: reply.text, toolCalls: reply.toolCalls });
          // The chat user's account and subscriptions as they are now, read once for the whole reply.
          scope ??= await modelToolScope(modelTools!, chat.user_id!, chat.client_id);
          for (const call of reply.toolCalls) {
            const result = ran++ < MAX_TOOL_CALLS ? await runModelTool(modelTools!, scope, call) : TOO_MANY_TOOL_CALLS;
            messages.push({ role: 'tool', toolCallId: call.id, content: result });
            turns.push({ id: call.id, name: call.name, arguments: call.arguments, result });
          }
        }
      } catch (error) {
        await reportProviderFailure(chat, error);
        throw error;
      }
      if (reply.text.trim() === '') throw Errors.providerError('the reply was empty; try again');
      const answered = clock.now();
      const assistant: SaidSentence = { text: reply.text, tokens: await tokens.count(reply.text), role: 2, rate: null, user_id: null, usage: usage.total, toolCalls: turns };
      const due = silenceDeadline(usecase, answered);
      const [id] = await chats.record(
        chat.id,
        chat.client_id,
        [posted, assistant],
        { ...base, add_tokens: usage.total, auto_msg_due_at: due },
        answered,
        (trx) =>
          consumptions.recordReply(
            {
              kind: 'chat',
              userId: authorId,
              clientId: chat.client_id,
              usecaseId: usecase.id,
              chatId: chat.id,
              model,
              promptTokens: usage.prompt,
              completionTokens: usage.completion,
              date: answered,
            },
            trx,
          ),
      );
      announceDue(due);
      return id!;
    },

    /**
     * Administrators' report: hand-offs per use case by reason and event, and how many followed an answer
     * rated bad. Consumers' scope would be their client, but the route is for administrators.
     */
    async handoffReport(caller: Caller, query: { usecaseIds?: number[]; from?: Date; before?: Date }): Promise<HandoffCounts[]> {
      return chats.handoffCounts({ onlyClientId: visibleClient(caller), ...query });
    },

    async sentencesOf(caller: Caller, chatId: number, query: { fields?: string; where?: string; tz: string }): Promise<{ rows: ChatSentenceRow[]; fields: string[] }> {
      await visibleChat(caller, chatId);
      const fields = parseFields(query.fields, CHAT_SENTENCE_COLUMNS);
      const where = filterExpression(query.where, CHAT_SENTENCE_COLUMNS, { parameter: 'where', tz: query.tz });
      return { rows: await sentences.listForChat(chatId, where), fields };
    },

    async rate(caller: Caller, chatId: number, sentenceId: number, rate: 0 | 1): Promise<void> {
      await visibleChat(caller, chatId);
      if (!(await chats.rate(chatId, sentenceId, rate))) throw Errors.notFound(`Sentence ${sentenceId} in chat`, chatId);
    },

    /** Sends the silence message of every chat whose time-out has passed; answers how many were sent. */
    async sendDueAutoMessages(now: Date = clock.now(), limit = 100): Promise<number> {
      let total = 0;
      for (;;) {
        const sent = await chats.sendDueAutoMessages(now, limit);
        total += sent.length;
        if (sent.length < limit) return total;
      }
    },

    /**
     * Sends each silence message at its due time: after every pass it sleeps until the next deadline
     * stored in the database, and a deadline stored by this process wakes it at once. A deadline
     * stored by another process is seen within `intervalMs` (the longest sleep, default 1 s). The
     * schedule lives in the database and each send is claimed with SKIP LOCKED, so a restart loses
     * nothing and several processes never send a message twice.
     */
    startAutoMessageScheduler(options: { intervalMs?: number; onError?: (error: unknown) => void } = {}): { stop(): Promise<void> } {
      const longest = options.intervalMs ?? 1000;
      let stopped = false;
      let timer: NodeJS.Timeout | undefined;
      let armedFor = Infinity;
      let running: Promise<unknown> | undefined;
      let again = false;

      const arm = (at: number) => {
        if (stopped) return;
        const target = Math.min(at, clock.now().getTime() + longest);
        if (timer && armedFor <= target) return;
        clearTimeout(timer);
        armedFor = target;
        timer = setTimeout(tick, Math.max(0, target - clock.now().getTime()));
        timer.unref();
      };
      const pass = async () => {
        const now = clock.now();
        await service.sendDueAutoMessages(now);
        const due = await chats.nextAutoMessageDue(now);
        // Still due after this pass: another process holds it (SKIP LOCKED); look again shortly.
        return due === null ? Infinity : Math.max(due.getTime(), now.getTime() + 200);
      };
      function tick() {
        timer = undefined;
        armedFor = Infinity;
        if (running) {
          again = true;
          return;
        }
        let next = Infinity;
        running = pass()
          .then((due) => (next = due))
          .catch((error: unknown) => options.onError?.(error))
          .finally(() => {
            running = undefined;
            // A deadline announced during the pass may already be due; a failed pass retries later.
            arm(again ? 0 : next);
            again = false;
          });
      }
      const listener = (due: Date) => arm(due.getTime());
      dueListeners.add(listener);
      arm(0);
      return {
        async stop() {
          stopped = true;
          dueListeners.delete(listener);
          clearTimeout(timer);
          await running;
        },
      };
    },
  };
  return service;
}

export type ChatsService = ReturnType<typeof createChatsService>;
