import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { TrainedModel } from '../../training/index.js';
import type { Caller } from '../caller.js';
import { Errors } from '../errors.js';
import type { Clock } from '../ports.js';
import type { NetworksRepository, StoredNetworkSummary } from './networks.repository.js';
import { requireTraining, type OwnershipLookups } from '../shared/access.js';


/** Models kept parsed per process: forecasting revives each model's families once, not on every request. */
const CACHED_MODELS = 32;

/**
 * Network weights of section 4.6. The `query` text of POST /netw is kept verbatim as data (legacy
 * trainers posted SQL; running it would hand them the database), and the engine's TrainedModel JSON is
 * stored beside it, so a restarted service predicts with exactly the network it trained.
 */
export function createNetworksService(deps: { networks: NetworksRepository; lookups: OwnershipLookups; clock: Clock }) {
  const { networks, lookups, clock } = deps;
  /** trainingId -> the newest model as parsed, with its stored id; Map order is least recently used first. */
  const parsed = new Map<number, { id: string; model: TrainedModel }>();

  async function summaryOf(trainingId: number): Promise<StoredNetworkSummary> {
    const summary = await networks.summary(trainingId);
    if (!summary) throw Errors.noNetwork(trainingId);
    return summary;
  }

  return {
    /**
     * POST /netw: answers the new weight's id. Without `trainingId` the weights belong to the training of
     * the caller's most recently started Running job: the one a trainer posting them is running.
     */
    async storeQuery(caller: Caller, input: { query: string; trainingId?: number }): Promise<number> {
      let trainingId = input.trainingId;
      let owner = caller.userId;
      if (trainingId === undefined) {
        trainingId = await networks.trainingOfRunningJob(caller.userId);
        if (trainingId === undefined) throw Errors.missingParameter('training_id');
      } else {
        owner = (await requireTraining(lookups, caller, trainingId)).user_id;
      }
      return networks.insertQuery({ training_id: trainingId, user_id: owner, content: input.query }, clock.now());
    },

    /** GET /netw: what is stored for a training (error when nothing is). */
    async confirm(caller: Caller, trainingId: number): Promise<StoredNetworkSummary & { trainingId: number }> {
      await requireTraining(lookups, caller, trainingId);
      return { trainingId, ...(await summaryOf(trainingId)) };
    },

    /** DELETE /netw: every stored weight of the training (error when nothing is stored). */
    async remove(caller: Caller, trainingId: number): Promise<void> {
      await requireTraining(lookups, caller, trainingId);
      if ((await networks.deleteForTraining(trainingId)) === 0) throw Errors.noNetwork(trainingId);
    },

    /** For the runner: stores a training's model, replacing the previous one; answers the weight's id and its stored bytes. */
    async saveModel(trainingId: number, userId: number, model: TrainedModel, executor?: Kysely<Database>): Promise<{ id: number; bytes: number }> {
      const content = JSON.stringify(model);
      const id = await networks.replaceModel({ training_id: trainingId, user_id: userId, content }, clock.now(), executor);
      return { id, bytes: Buffer.byteLength(content) };
    },

    /**
     * The training's newest engine model, as saved (a JSON text round trip reproduces it exactly). The
     * parsed model is kept while it stays the newest, so predict() finds its families already revived
     * (they are cached per model object); callers must treat it as read-only.
     */
    async loadModel(trainingId: number): Promise<TrainedModel | undefined> {
      const id = await networks.latestModelId(trainingId);
      if (id === undefined) return undefined;
      const hit = parsed.get(trainingId);
      parsed.delete(trainingId);
      if (hit?.id === id) {
        parsed.set(trainingId, hit);
        return hit.model;
      }
      const content = await networks.modelContent(id);
      if (content === undefined) return undefined;
      const model = JSON.parse(content) as TrainedModel;
      parsed.set(trainingId, { id, model });
      if (parsed.size > CACHED_MODELS) parsed.delete(parsed.keys().next().value!);
      return model;
    },

    latestFinishedJobWithModel: (ownerId: number | undefined, trainingId?: number) => networks.latestFinishedJobWithModel(ownerId, trainingId),
  };
}

export type NetworksService = ReturnType<typeof createNetworksService>;
