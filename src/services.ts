import type { Config } from './config.js';
import { instrumentedProvider } from './llm/instrumented.js';
import type { Metrics } from './observability/metrics.js';
import { createJobSignals } from './domain/jobs/job-signals.js';
import type { DatabaseHandle } from './db/database.js';
import { createPasswordsService } from './domain/accounts/passwords.service.js';
import { createBoundedHasher, type PasswordHasher } from './domain/accounts/secrets.js';
import {
  createAuthAttemptsRepository,
  createPasswordTokensRepository,
  createSessionsRepository,
} from './domain/accounts/sessions.repository.js';
import { createSessionsService } from './domain/accounts/sessions.service.js';
import { createUsersRepository } from './domain/accounts/users.repository.js';
import { createUsersService } from './domain/accounts/users.service.js';
import { createApplicationsRepository } from './domain/applications/applications.repository.js';
import { createApplicationsService } from './domain/applications/applications.service.js';
import { createConsumptionsRepository } from './domain/consumptions/consumptions.repository.js';
import { createConsumptionsService } from './domain/consumptions/consumptions.service.js';
import { createDatabaseEventLog } from './domain/logs/event-log.js';
import { createLogsRepository } from './domain/logs/logs.repository.js';
import { createLogsService } from './domain/logs/logs.service.js';
import type { Clock, EventLog, Mailer } from './domain/ports.js';
import { createSubscriptionsRepository } from './domain/subscriptions/subscriptions.repository.js';
import { createSubscriptionsService } from './domain/subscriptions/subscriptions.service.js';
import { createSummariesService } from './domain/summaries/summaries.service.js';
import { createDataRepository } from './domain/data/data.repository.js';
import { createDataService } from './domain/data/data.service.js';
import { chartAddress, createChartsService } from './domain/charts/charts.service.js';
import { createJobPartsRepository } from './domain/jobs/job-parts.repository.js';
import { createJobQueueRepository } from './domain/jobs/job-queue.repository.js';
import { createRunsService } from './domain/jobs/runs.service.js';
import { createJobsRepository } from './domain/jobs/jobs.repository.js';
import { createJobsService } from './domain/jobs/jobs.service.js';
import { createTrainingsRepository } from './domain/trainings/trainings.repository.js';
import { createTrainingsService } from './domain/trainings/trainings.service.js';
import { createChatsRepository } from './domain/chat/chats.repository.js';
import { createChatsService } from './domain/chat/chats.service.js';
import { createClientsRepository } from './domain/chat/clients.repository.js';
import { createClientsService } from './domain/chat/clients.service.js';
import { createPromptsService } from './domain/chat/prompts.service.js';
import { createSecretBox } from './domain/chat/secret-box.js';
import { createSentencesRepository } from './domain/chat/sentences.repository.js';
import { createSentencesService } from './domain/chat/sentences.service.js';
import { createUsecasesRepository } from './domain/chat/usecases.repository.js';
import { createUsecasesService } from './domain/chat/usecases.service.js';
import { createOpenAiProvider } from './llm/openai-provider.js';
import type { LlmProvider } from './llm/provider.js';
import { createTokenCounter } from './llm/tokens.js';
import { createAppRecordsRepository } from './domain/model-records/app-records.repository.js';
import { createAppRecordsService } from './domain/model-records/app-records.service.js';
import { createForecastsService } from './domain/model-records/forecasts.service.js';
import { createNetworksRepository } from './domain/model-records/networks.repository.js';
import { createNetworksService } from './domain/model-records/networks.service.js';
import type { OwnershipLookups } from './domain/shared/access.js';
import { createStatsRepository } from './domain/model-records/stats.repository.js';
import { createStatsService } from './domain/model-records/stats.service.js';

/** Side-effect adapters the services need; tests hand in their own. */
export interface ServiceDeps {
  config: Config;
  database: DatabaseHandle;
  mailer: Mailer;
  clock: Clock;
  hasher: PasswordHasher;
  /** Key for secrets encrypted at rest (provider keys). */
  secretKey: string;
  events?: EventLog;
  /** Language-model provider; default: the OpenAI-compatible server at LLM_BASE_URL. */
  llm?: LlmProvider;
  /** Process metrics; LLM calls and tokens are counted when given. */
  metrics?: Metrics;
}

/**
 * The composition root of the domain: repositories, then services, written out top to bottom so the
 * whole wiring reads in one place. HTTP routes receive the result; nothing else builds services.
 */
export function buildServices(deps: ServiceDeps) {
  const { config, clock, mailer } = deps;
  // Every place that hashes (login, registration, password change, recovery, admin CLI) shares one bound.
  const hasher = createBoundedHasher(deps.hasher, { concurrency: config.passwordHashConcurrency, queue: config.passwordHashQueue });
  const db = deps.database.db;
  // --- logs (first: every other area reports its noteworthy events through `events`) ---
  const logsRepository = createLogsRepository(db);
  const events = deps.events ?? createDatabaseEventLog({ logs: logsRepository, clock });
  const logs = createLogsService({ logs: logsRepository, clock });
  const consumptions = createConsumptionsService({ consumptions: createConsumptionsRepository(db), clock });

  // --- accounts ---
  const usersRepository = createUsersRepository(db);
  const { pool, read } = deps.database;
  const sessionsRepository = createSessionsRepository(db, pool ? { pool } : read ? { read } : undefined);
  const attemptsRepository = createAuthAttemptsRepository(db);
  const sessions = createSessionsService({
    users: usersRepository,
    sessions: sessionsRepository,
    attempts: attemptsRepository,
    hasher,
    clock,
    events,
    ttlSeconds: config.sessionTtlSeconds,
    limits: { failuresPerAddress: config.loginFailuresPerAddress, windowMs: config.loginFailureWindowMs, slowdownMaxMs: config.loginSlowdownMaxMs },
  });
  const users = createUsersService({ users: usersRepository, sessions: sessionsRepository, hasher, clock });
  const passwords = createPasswordsService({
    users: usersRepository,
    sessions: sessionsRepository,
    tokens: createPasswordTokensRepository(db),
    attempts: attemptsRepository,
    hasher,
    mailer,
    clock,
    events,
    publicUrl: config.publicUrl,
  });

  // --- applications and subscriptions ---
  const applications = createApplicationsService({ applications: createApplicationsRepository(db) });
  const subscriptions = createSubscriptionsService({
    subscriptions: createSubscriptionsRepository(db),
    applications,
    users: usersRepository,
    clock,
  });

  // --- data files: uploads, outputs, data tables ---
  const jobSignals = createJobSignals();
  const data = createDataService({
    repository: createDataRepository(deps.database),
    maxUploadBytes: config.maxUploadBytes,
    uploads: config.uploads,
    onQueued: jobSignals.onQueued,
  });

  // --- trainings and jobs ---
  const jobsRepository = createJobsRepository(db);
  const trainingsRepository = createTrainingsRepository(db);
  const dataCleaner = (jobId: number) => data.deleteForJob(jobId);
  const trainings = createTrainingsService({ trainings: trainingsRepository, jobs: jobsRepository, dataCleaner });
  const jobQueue = createJobQueueRepository(db);
  const jobs = createJobsService({
    jobs: jobsRepository,
    queue: jobQueue,
    onAbort: jobSignals.onAbort,
    onQueued: jobSignals.onQueued,
    trainings: trainingsRepository,
    clock,
    events,
    dataCleaner,
    hasActiveSubscription: (userId, appName) => subscriptions.isActive(userId, appName, 'app_name'),
  });

  // --- models: App records, status records, network weights, forecasts (section 4.6, older forecasts.php) ---
  const ownership: OwnershipLookups = {
    job: (id, ownerId) => jobsRepository.findVisible(id, ownerId),
    training: (id, ownerId) => trainingsRepository.findVisible(id, ownerId),
  };
  const appRecords = createAppRecordsService({ records: createAppRecordsRepository(db), lookups: ownership, clock });
  const stats = createStatsService({ stats: createStatsRepository(db), lookups: ownership, clock });
  const networks = createNetworksService({ networks: createNetworksRepository(db), lookups: ownership, clock });
  const forecasts = createForecastsService({
    networks,
    lookups: ownership,
    writeOutput: (output) => data.writeOutput(output.jobId, output.rows, output.header, output.intervals),
  });
  const charts = createChartsService({ jobs, data });
  // The training runner's side of the domain: the queues and a run's end, stored in one transaction.
  const runs = createRunsService({ db, queue: jobQueue, parts: createJobPartsRepository(db), data, networks, stats, consumptions });

  // --- automated chat: clients, use cases, sentences, chats, prompts ---
  const provider = deps.llm ?? createOpenAiProvider({ baseUrl: config.llmBaseUrl, timeoutMs: config.llmTimeoutMs });
  const llm = deps.metrics ? instrumentedProvider(provider, deps.metrics) : provider;
  const tokenCounter = createTokenCounter(config.llmModel);
  const clientsRepository = createClientsRepository(db);
  const usecasesRepository = createUsecasesRepository(db);
  const sentencesRepository = createSentencesRepository(db);
  const clients = createClientsService({ clients: clientsRepository, secretBox: createSecretBox(deps.secretKey, config.previousSecretKey) });
  const usecases = createUsecasesService({ usecases: usecasesRepository, sentences: sentencesRepository, clients: clientsRepository, clock });
  const sentences = createSentencesService({
    sentences: sentencesRepository,
    usecases: usecasesRepository,
    usecasesService: usecases,
    tokens: tokenCounter,
    clock,
  });
  const chat = createChatsService({
    chats: createChatsRepository(db),
    sentences: sentencesRepository,
    usecases: usecasesRepository,
    clients: clientsRepository,
    clientsService: clients,
    consumptions,
    llm,
    tokens: tokenCounter,
    model: config.llmModel,
    clock,
    events,
    modelTools: { jobs, data, forecasts, subscriptions, users: usersRepository, chartUrl: (jobId, series) => chartAddress(config.publicUrl, jobId, series) },
  });
  const prompts = createPromptsService({ clientsService: clients, consumptions, llm, tokens: tokenCounter, model: config.llmModel });

  // --- summaries (each area contributes its counter) ---
  const summaries = createSummariesService({
    counters: {
      users: () => usersRepository.countByEnabled(),
      subscriptions: (userId) => subscriptions.countApplications(userId),
      runningJobs: (userId) => jobs.countRunning(userId),
      knowledges: (userId) => trainings.countTrained(userId),
    },
  });

  return { jobSignals, events, sessions, users, passwords, summaries, applications, subscriptions, logs, consumptions, trainings, jobs, clients, usecases, sentences, chat, prompts, appRecords, stats, networks, forecasts, data, charts, runs };
}

export type Services = ReturnType<typeof buildServices>;
