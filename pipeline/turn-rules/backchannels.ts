import { phraseKey, readSpoken } from './spoken-text.js'

/** The backchannel phrases used when `turn_manager.backchannels` names none for the call's language. */
export const DEFAULT_BACKCHANNELS: Readonly<Record<string, readonly string[]>> = {
  en: [
    'uh-huh',
    'uh huh',
    'mm-hm',
    'mm-hmm',
    'mhm',
    'mm',
    'hmm',
    // A listener's "uh" or "oh" is how a backchannel starts; a real interruption goes on to words that are not.
    'uh',
    'um',
    'oh',
    'ah',
    'yeah',
    'yep',
    'yes',
    'okay',
    'ok',
    'right',
    'sure',
    'i see',
    'got it',
    'alright',
    'all right',
    'cool',
    'great',
  ],
}

/**
 * Recognises backchannels: what a listener says to show they follow ("uh-huh", "yeah", "okay"), not to take the
 * turn. Text made only of such phrases ("yeah, okay", "mm-hm mm-hm") is one.
 */
export class BackchannelList {
  readonly #phrases: string[][]

  constructor(phrases: readonly string[]) {
    // Longest first, so "all right" is matched before "right".
    this.#phrases = [...new Set(phrases.map(phraseKey).filter((p) => p !== ''))]
      .map((p) => p.split(' '))
      .sort((a, b) => b.length - a.length)
  }

  /** The list for a language tag ("en", "en-US", "multi"): its own entry, then its primary subtag's, then English. */
  static forLanguage(lists: Readonly<Record<string, readonly string[]>>, language: string | undefined): BackchannelList {
    const tag = (language ?? 'en').toLowerCase()
    const primary = tag.split('-')[0] ?? tag
    // A language given with an empty list turns backchannels off for it; one not given falls back to English.
    const phrases = lists[tag] ?? lists[primary] ?? lists.en ?? []
    return new BackchannelList(phrases)
  }

  /** True when the list has no phrase (backchannels are then not told apart). */
  get empty(): boolean {
    return this.#phrases.length === 0
  }

  /** True when `text` has words and every one of them belongs to a backchannel phrase. */
  matches(text: string): boolean {
    return this.#read(text, false)
  }

  /**
   * True when `text` is a backchannel so far: its words are backchannel phrases, the last perhaps only begun ("i"
   * of "i see", "got" of "got it"). Interim words are read this way: the next word decides.
   */
  mayBe(text: string): boolean {
    return this.#read(text, true)
  }

  #read(text: string, openEnd: boolean): boolean {
    const words = readSpoken(text).words.flatMap((w) => w.split('-'))
    if (words.length === 0) return false
    let i = 0
    while (i < words.length) {
      const at = i
      const hit = this.#phrases.find((p) => p.every((w, k) => words[at + k] === w))
      if (hit === undefined) {
        const rest = words.slice(at)
        return openEnd && this.#phrases.some((p) => p.length > rest.length && rest.every((w, k) => p[k] === w))
      }
      i += hit.length
    }
    return true
  }
}
