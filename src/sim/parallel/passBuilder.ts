import type { CollectiveOp } from '../collectives/types.js';
import type { Program, StreamKind } from '../program/types.js';
import type { Block } from '../workload/ops.js';
import type { PassTemplate } from './blockTemplate.js';
import { issueCpExchange, type CpRing } from './cpRing.js';
import type { PipeOp } from './schedules.js';
import type { BlockTasks, PassRecord } from './stepTypes.js';
import type { TpSync } from './tpSync.js';

/** The ranks one replica's TP group of one stage runs its passes on. */
export interface PassRanks {
  /** The whole TP group: its collectives move the whole group's data. */
  group: readonly number[];
  /** The simulated members of the group, whose streams the tasks occupy. */
  members: readonly number[];
  /** The TP groups of the replicas nobody simulates, whose collectives run alongside as shadow flows. */
  shadows: readonly (readonly number[])[];
  /** Per member: its kernel durations with jitter and its speed factor applied. */
  jitter: ((durationNs: number) => number)[];
  /** The context-parallel ring of this replica and stage (cp > 1). */
  ring?: CpRing;
  /** The expert-parallel group of the members and the other groups of the stage, as shadows (ep > 1). */
  ep?: { group: readonly number[]; shadows: readonly (readonly number[])[] };
  /** The expert tensor-parallel group, likewise, where it is not the TP group (an etp of its own above 1). */
  etp?: { group: readonly number[]; shadows: readonly (readonly number[])[] };
  /** Expert exchanges go on the TP stream, so that another pass can compute meanwhile (combinedPass.ts). */
  exchangesAside?: boolean;
}

/** A block's part of one pass: the block, its template for the pass, the pass and its record. */
export interface BlockPart {
  block: Block;
  t: PassTemplate;
  op: PipeOp;
  rec: PassRecord;
  /** On the first block of a pass whose host waits for the GPU at its start: the host work after that wait. */
  startHostNs?: number;
}

/** A block's part of a pass being added segment by segment (`PassBuilder.runBlock`). */
export interface BlockRun extends BlockPart {
  label: string;
  entry: BlockTasks;
  /** Syncs issued in this block and not yet waited for. */
  issued: Map<TpSync, number[]>;
  /** What the next segment waits for besides its syncs (the pass's collectives from the block before). */
  waiting: number[];
  /** The next segment to add. */
  next: number;
  /** The segment whose syncs are issued (they are issued once, before it). */
  issuedBefore?: number;
}

/** A segment's host work as one member runs it (blockTemplate's lead and rest, the pass's start). */
interface HostSegment {
  /** The segment's first op blocks the host until the GPU is done. */
  syncBefore: boolean;
  /** The first segment of a pass whose host waits for the GPU at its start. */
  passSync: boolean;
  leadNs: number;
  /** Host work after the pass's start wait (0 but on the first segment of such a pass). */
  startNs: number;
  /** Host work past the lead, carried to the next segment. */
  restNs: number;
}

/**
 * Instantiates, one block after another, the passes of one TP group of one replica and stage, and owns what carries
 * from one to the next: each member's latest compute task, host work left over from the last segment, and the TP
 * collectives still to wait for. The collectives move the whole group's data and occupy the members' streams.
 * When a template models host costs, each segment also gets a task on the rank's host stream: it runs the host work
 * left over from the previous segment plus this segment's lead (blockTemplate), and the segment's compute task waits
 * for it; host work past the lead carries to the next segment. A segment whose first op blocks the host first
 * finishes the carried work, then waits for the rank's last compute task.
 */
export class PassBuilder {
  private carry: number[] = [];
  private readonly lastCompute: number[] = [];
  private readonly hostCarry: number[];

  constructor(
    private readonly program: Program,
    private readonly ranks: PassRanks,
  ) {
    this.hostCarry = ranks.members.map(() => 0);
  }

  /** The TP collectives still outstanding after the last block: the optimizer waits for them. */
  get pendingTp(): number[] {
    return this.carry;
  }

  /** A new record for pass `op`, with a gradient-task map per member when it is a backward. */
  newRecord(op: PipeOp): PassRecord {
    return {
      first: [],
      last: [],
      blocks: [],
      gradTask: op.kind === 'B' ? this.ranks.members.map(() => new Map()) : undefined,
    };
  }

  /** The all-gather, on the members' compute streams, of the 1/t shards of `what` a pass received. */
  gatherReceived(rec: PassRecord, what: string, op: PipeOp, bytes: number): void {
    const { group, shadows, members } = this.ranks;
    rec.gather = this.program.collective(
      'tp-collective',
      `all-gather received ${what} mb${op.microBatch}`,
      { op: 'all_gather', group, bytes, shadowGroups: shadows.length > 0 ? shadows : undefined },
      [],
      op.microBatch,
      'compute',
      members,
    );
  }

  /**
   * A collective over `group` (which may be wider than the TP group) on the members' compute streams after their
   * latest compute task: the work after it waits for it.
   */
  blockingCollective(
    label: string,
    work: { op: CollectiveOp; group: readonly number[]; bytes: number },
    op: PipeOp,
  ): void {
    const deps = this.ranks.members.map((_, i) => this.lastCompute[i]).filter((x): x is number => x !== undefined);
    const id = this.program.collective(
      'tp-collective',
      `${label} mb${op.microBatch}`,
      work,
      deps,
      op.microBatch,
      'compute',
      this.ranks.members,
    );
    this.carry = [...this.carry, id];
  }

  /**
   * Adds `block`'s part of pass `op`, from its template `t`, to `rec`. `startHostNs`, on the first block of a pass
   * whose host waits for the GPU at its start, is the host work after that wait.
   */
  addBlock(block: Block, t: PassTemplate, op: PipeOp, rec: PassRecord, startHostNs?: number): void {
    const run = this.startBlock({ block, t, op, rec, startHostNs }, this.carry);
    this.runBlock(run);
    this.carry = this.finishBlock(run);
  }

  /** Begins a block's part of a pass, to be added by `runBlock`; `waiting`: what its first segment waits for. */
  startBlock(part: BlockPart, waiting: number[]): BlockRun {
    const label = `${part.op.kind === 'F' ? 'fwd' : 'bwd'} ${part.block.name} mb${part.op.microBatch}`;
    return { ...part, label, entry: { block: part.block, first: [], last: [] }, issued: new Map(), waiting, next: 0 };
  }

  /**
   * Adds a block's segments from `run.next` on. With `yieldAtExchange` it stops before a segment that waits for an
   * expert-parallel exchange issued just before it (the exchange is issued), so that another pass's compute can run
   * while it is in flight; false then, true once the block is done.
   */
  runBlock(run: BlockRun, yieldAtExchange = false): boolean {
    const { t, op, rec } = run;
    for (let k = run.next; k < t.segments.length; k++) {
      const seg = t.segments[k];
      if (run.issuedBefore !== k) {
        this.issue(seg.issueBefore, run.issued, op);
        run.issuedBefore = k;
        if (yieldAtExchange && seg.waitFor.some((s) => s.expert === true && run.issued.has(s))) {
          run.next = k;
          return false;
        }
      }
      this.addSegment(run, k, k === 0 && run.startHostNs !== undefined);
    }
    run.next = t.segments.length;
    rec.blocks.push(run.entry);
    return true;
  }

  /** Issues what the block issues after its last segment; returns what the pass's next block waits for. */
  finishBlock(run: BlockRun): number[] {
    this.issue(run.t.issueAfter, run.issued, run.op);
    if (run.t.hostModelled) for (let i = 0; i < this.hostCarry.length; i++) this.hostCarry[i] += run.t.hostAfterNs;
    return [...run.waiting, ...[...run.issued.values()].flat()];
  }

  /** The builder's outstanding TP collectives, set after passes that carried their own (combinedPass.ts). */
  set pendingTp(carry: number[]) {
    this.carry = carry;
  }

  /** One compute task per member for segment k of a block's pass, after what it waits for. */
  private addSegment(run: BlockRun, k: number, passSync: boolean): void {
    const { t, op, rec, entry, label } = run;
    const seg = t.segments[k];
    const deps = [...run.waiting, ...seg.waitFor.flatMap((s) => run.issued.get(s) ?? [])];
    const ring = this.ranks.ring;
    const received = ring?.waited
      ? seg.waitFor
          .filter((s) => s.group === 'cp' && run.issued.has(s))
          .map((s) => ({ sync: s, sends: run.issued.get(s)! }))
      : [];
    run.waiting = [];
    for (const s of seg.waitFor) run.issued.delete(s);
    const segmentTasks = this.ranks.members.map((rank, i) => {
      const own = deps.length === 0 && !t.hostModelled ? deps : [...deps];
      const hostId = t.hostModelled
        ? this.addHostWork(
            i,
            {
              syncBefore: seg.syncBefore,
              passSync,
              leadNs: seg.hostLeadNs,
              startNs: passSync ? (run.startHostNs ?? 0) : 0,
              restNs: seg.hostNs - seg.hostLeadNs,
            },
            label,
            op.microBatch,
          )
        : undefined;
      if (hostId !== undefined) {
        own.push(hostId);
        if (passSync) (rec.firstHost ??= [])[i] = hostId;
      }
      const id = this.program.local(
        rank,
        'compute',
        seg.kind,
        label,
        this.ranks.jitter[i](seg.durationNs),
        own,
        op.microBatch,
      );
      if (rec.first[i] === undefined) rec.first[i] = id;
      if (entry.first[i] === undefined) entry.first[i] = id;
      rec.last[i] = id;
      entry.last[i] = id;
      this.lastCompute[i] = id;
      if (rec.gradTask) for (const tensor of seg.gradTensors) rec.gradTask[i].set(tensor, id);
      return id;
    });
    for (const w of received) ring!.waited!(label, w.sync, w.sends, segmentTasks);
  }

  /**
   * Issues `syncs` after each member's latest compute task: a TP collective (one task; on the TP stream when an op
   * runs before it is needed), or a context-parallel exchange (one send per member). The next op waits for all.
   */
  private issue(syncs: readonly TpSync[], issued: Map<TpSync, number[]>, op: PipeOp): void {
    const { members, group, shadows } = this.ranks;
    for (const sync of syncs) {
      const deps = members.map((_, i) => this.lastCompute[i]).filter((x): x is number => x !== undefined);
      if (sync.group === 'cp') {
        issued.set(
          sync,
          issueCpExchange(
            this.program,
            sync,
            `${sync.label} mb${op.microBatch}`,
            members,
            this.ranks.ring!,
            this.lastCompute,
            op.microBatch,
          ),
        );
        continue;
      }
      // Beside another pass, the expert exchanges and the TP gathers issued with them go to the TP stream together, in
      // the order they are issued.
      const aside = sync.neededBy > sync.afterOp + 1 || (sync.expert === true && this.ranks.exchangesAside === true);
      const stream: StreamKind = aside ? 'tp' : 'compute';
      const over = sync.group === 'ep' ? this.ranks.ep! : sync.group === 'etp' ? this.ranks.etp! : { group, shadows };
      issued.set(sync, [
        this.program.collective(
          sync.group === 'ep' ? 'ep-alltoall' : 'tp-collective',
          sync.label,
          {
            op: sync.op,
            group: over.group,
            bytes: sync.bytes,
            shadowGroups: over.shadows.length > 0 ? over.shadows : undefined,
          },
          deps,
          op.microBatch,
          stream,
          members,
        ),
      ]);
    }
  }

  /** The host task member `i` runs before a segment's compute task, which waits for it (none when it has no work). */
  private addHostWork(i: number, seg: HostSegment, label: string, microBatch: number): number | undefined {
    const rank = this.ranks.members[i];
    const hostDeps: number[] = [];
    if ((seg.syncBefore || seg.passSync) && this.lastCompute[i] !== undefined) {
      if (this.hostCarry[i] > 0)
        this.program.local(rank, 'host', 'other', `host: ${label}`, Math.round(this.hostCarry[i]), [], microBatch);
      this.hostCarry[i] = 0;
      hostDeps.push(this.lastCompute[i]);
    }
    const hostNs = Math.round(this.hostCarry[i] + seg.leadNs + seg.startNs);
    this.hostCarry[i] = seg.restNs;
    if (hostNs > 0 || hostDeps.length > 0 || seg.passSync)
      return this.program.local(rank, 'host', 'other', `host: ${label}`, hostNs, hostDeps, microBatch);
    return undefined;
  }
}
