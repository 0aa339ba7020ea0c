import type { PipelineConfig } from '../config/schema.js'
import type { TurnManagerOptions } from '../options/turn-manager-options.js'
import { BackchannelList } from '../turn-rules/backchannels.js'
import { callerCountry } from '../turn-rules/caller-country.js'
import { TurnEndJudge } from '../turn-rules/turn-end-judge.js'
import type { WordRules } from './turn-taking.js'

/** The STT's language tag as its options give it (`language`, or a vendor model's), undefined when none says. */
function sttLanguage(config: PipelineConfig): string | undefined {
  const stt = config.plugins.find((p) => p.use.startsWith('stt.'))
  const options = (stt?.options ?? {}) as { language?: unknown; speech_model?: unknown }
  if (typeof options.language === 'string') return options.language
  if (options.speech_model === 'universal-streaming-english') return 'en'
  return undefined
}

/** The word-reading rules of one call, from its `turn_manager` options, its STT's language and the caller's number. */
export function wordRulesOf(
  config: PipelineConfig,
  tm: TurnManagerOptions,
  fromPhoneNumber: string | undefined,
  hasStt: boolean,
): WordRules {
  const judge = new TurnEndJudge(
    { baseMs: tm.base_timeout_ms, minMs: tm.min_timeout_ms, maxMs: tm.max_timeout_ms },
    callerCountry(fromPhoneNumber, tm.default_country),
  )
  const list = BackchannelList.forLanguage(tm.backchannels, sttLanguage(config))
  return { judge, backchannels: hasStt && !list.empty ? list : undefined }
}
