// The transcription answers of whisper.cpp's whisper-server (examples/server/server.cpp), for the speech fake's
// `whisper.cpp` flavour. Checked against the real server built from source (whisper.cpp 1.9.3; a recorded answer is
// test/fixtures/openai-speech/whisper-server-verbose.json). What differs from OpenAI's answers:
// - the text is each segment's text (which starts with a space) followed by a newline;
// - `verbose_json` has no top-level `words`: each segment lists its tokens as `words` ({word, start, end, t_dtw,
//   probability}), a word's first token with its leading space, the rest without; `timestamp_granularities[]`,
//   `model` and `stream` are ignored (the answer is always one JSON body);
// - a 400 (no `file`, audio it cannot read) is `Invalid request` as text/plain; other failures are {"error": "..."}.

/** One answer: status, content type, body. */
export interface WhisperCppAnswer {
  status: number
  type: string
  body: string
}

/** Token pieces of `word` as whisper's tokenizer might cut it: the first with the leading space, then 4 letters each. */
function pieces(word: string): string[] {
  const out = [` ${word.slice(0, 4)}`]
  for (let at = 4; at < word.length; at += 4) out.push(word.slice(at, at + 4))
  return out
}

/** The answer to a transcription whose words are `words` (seconds of the file), as whisper-server gives it. */
export function whisperCppTranscription(
  format: string,
  text: string,
  words: ReadonlyArray<{ word: string; start: number; end: number }>,
  duration: number,
): WhisperCppAnswer {
  const segmentText = text === '' ? '' : ` ${text}`
  const full = text === '' ? '' : `${segmentText}\n`
  if (format === 'text') return { status: 200, type: 'text/html; charset=utf-8', body: full }
  if (format !== 'verbose_json') return { status: 200, type: 'application/json', body: JSON.stringify({ text: full }) }
  const tokens = words.flatMap((w) => {
    const parts = pieces(w.word)
    const each = (w.end - w.start) / parts.length
    return parts.map((word, i) => ({
      word,
      start: +(w.start + i * each).toFixed(2),
      end: +(w.start + (i + 1) * each).toFixed(2),
      t_dtw: -1,
      probability: 0.9,
    }))
  })
  const segments =
    text === ''
      ? []
      : [
          {
            id: 0,
            text: segmentText,
            start: 0,
            end: +duration.toFixed(2),
            tokens: tokens.map((_, i) => 1000 + i),
            words: tokens,
            temperature: 0,
            avg_logprob: -0.3,
            no_speech_prob: 0.01,
          },
        ]
  return {
    status: 200,
    type: 'application/json',
    body: JSON.stringify({
      task: 'transcribe',
      language: 'english',
      duration,
      text: full,
      segments,
      detected_language: 'english',
      detected_language_probability: 0.9,
      language_probabilities: { en: 0.9 },
    }),
  }
}

/** whisper-server's failure answers: its error handler turns every 400 into a plain `Invalid request`. */
export function whisperCppError(status: number, message: string): WhisperCppAnswer {
  if (status === 400) return { status, type: 'text/plain', body: 'Invalid request' }
  return { status, type: 'application/json', body: JSON.stringify({ error: message }) }
}
