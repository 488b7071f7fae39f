import type { TrainedModel } from '../../training/types.js';
import type { Caller } from '../caller.js';
import { Errors } from '../errors.js';
import type { Clock } from '../ports.js';
import type { NetworksRepository, StoredNetworkSummary } from './networks.repository.js';
import { requireTraining, type OwnershipLookups } from '../shared/access.js';


/**
 * Network weights of section 4.6. The `query` text of POST /netw is kept verbatim as data (legacy
 * trainers posted SQL; running it would hand them the database), and the engine's TrainedModel JSON is
 * stored beside it, so a restarted service predicts with exactly the network it trained.
 */
export function createNetworksService(deps: { networks: NetworksRepository; lookups: OwnershipLookups; clock: Clock }) {
  const { networks, lookups, clock } = deps;

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

    /** For the runner: stores a training's model, replacing the previous one; answers the weight's id. */
    saveModel: (trainingId: number, userId: number, model: TrainedModel): Promise<number> =>
      networks.replaceModel({ training_id: trainingId, user_id: userId, content: JSON.stringify(model) }, clock.now()),

    /** The training's newest engine model, as saved (a JSON text round trip reproduces it exactly). */
    async loadModel(trainingId: number): Promise<TrainedModel | undefined> {
      const content = await networks.latestModel(trainingId);
      return content === undefined ? undefined : (JSON.parse(content) as TrainedModel);
    },

    latestFinishedJobWithModel: (ownerId: number | undefined, trainingId?: number) => networks.latestFinishedJobWithModel(ownerId, trainingId),
  };
}

export type NetworksService = ReturnType<typeof createNetworksService>;
