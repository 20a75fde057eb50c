/**
 * What a rule about one kind of value adds to a candidate's score, and the context the rules read: the
 * candidate's label, line, sentence and position in the document.
 */
import type { Candidate } from "./Candidates.ts"
import type { AgentProfile } from "./KeyTerms.ts"
import type { PageContext } from "./Scoring.ts"

export interface Cues {
  readonly score: number
  /** Why, for the reasoning. */
  readonly cues: ReadonlyArray<string>
  /** `true`: decides on its own; `false`: never decides, whatever else said so; undefined: says nothing. */
  readonly decisive?: boolean
  /** Why the candidate does not answer the agent at all, when a rule says so. */
  readonly refused?: string
}

export const noCues: Cues = { score: 0, cues: [] }

export interface CueContext {
  readonly profile: AgentProfile
  readonly candidate: Candidate
  readonly page: PageContext
  /** The candidate's label, lower case. */
  readonly label: string
  /** The candidate's line, lower case. */
  readonly line: string
  /** The candidate's sentence. */
  readonly context: string
  /** Position in the document, 0 (start) to 1 (end). */
  readonly position: number
  /** What the label's key terms added to the score. */
  readonly labelScore: number
}

/** Adds up what several rules say, in order. */
export class CueSum {
  score = 0
  readonly cues: Array<string> = []
  decisive: boolean | undefined = undefined
  refused: string | undefined = undefined
  add(score: number, cue?: string): void {
    this.score += score
    if (cue !== undefined) this.cues.push(cue)
  }
  result(): Cues {
    return {
      score: this.score,
      cues: this.cues,
      ...(this.decisive === undefined ? {} : { decisive: this.decisive }),
      ...(this.refused === undefined ? {} : { refused: this.refused }),
    }
  }
}
