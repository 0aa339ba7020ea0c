import { readFileSync } from 'node:fs'
import t from 'tap'
import {
  multipartBody,
  openAiErrorMessage,
  parseTranscription,
  parseTranscriptionEvent,
} from '../../pipeline/vendors/stt/openai-transcription-codec.js'
import { parseMultipart } from '../fakes/openai-speech/multipart.js'

t.test('the multipart body is RFC 7578 byte for byte, and a strict reader reads it back', async (t) => {
  const wav = Buffer.from([0x52, 0x49, 0x46, 0x46, 0x0d, 0x0a, 0x2d, 0x2d]) // binary data that looks like CRLF and dashes
  const body = multipartBody(
    [
      { name: 'file', filename: 'segment.wav', contentType: 'audio/wav', data: wav },
      { name: 'model', value: 'whisper-1' },
    ],
    'BOUNDARY',
  )
  t.equal(
    body.toString('latin1'),
    '--BOUNDARY\r\nContent-Disposition: form-data; name="file"; filename="segment.wav"\r\nContent-Type: audio/wav\r\n\r\n' +
      `${wav.toString('latin1')}\r\n` +
      '--BOUNDARY\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n' +
      '--BOUNDARY--\r\n',
  )
  const parts = parseMultipart(body, 'BOUNDARY')
  t.same(parts[0]?.data, wav)
  t.equal(parts[1]?.data.toString(), 'whisper-1')
})

t.test('json, verbose_json (words at the top or in the segments) and what is not a transcription', async (t) => {
  t.strictSame(parseTranscription('{"text":" Hello. "}'), { text: 'Hello.' })
  t.strictSame(
    parseTranscription(
      JSON.stringify({
        task: 'transcribe',
        language: 'english',
        duration: 1.2,
        text: 'Hi there',
        words: [
          { word: 'Hi', start: 0.1, end: 0.3 },
          { word: ' there', start: 0.3, end: 0.8 },
        ],
      }),
    ),
    {
      text: 'Hi there',
      words: [
        { word: 'Hi', start: 0.1, end: 0.3 },
        { word: 'there', start: 0.3, end: 0.8 },
      ],
    },
  )
  t.strictSame(
    parseTranscription(
      JSON.stringify({
        text: 'Hi',
        segments: [{ id: 0, start: 0, end: 1, text: 'Hi', words: [{ word: 'Hi', start: 0.2, end: 0.4, probability: 0.9 }] }],
      }),
    ),
    { text: 'Hi', words: [{ word: 'Hi', start: 0.2, end: 0.4 }] },
  )
  t.throws(() => parseTranscription('<html>502 Bad Gateway</html>'), { code: 'vendor_protocol_error', message: /not JSON/ })
  t.throws(() => parseTranscription('{"error":"x"}'), { message: /without a "text" string/ })
})

t.test("whisper.cpp's answers: the text's line breaks, its tokens joined into words", async (t) => {
  // Recorded from whisper-server built from source, with random weights (hence the word).
  const recorded = readFileSync(new URL('../fixtures/openai-speech/whisper-server-verbose.json', import.meta.url), 'utf8')
  t.strictSame(parseTranscription(recorded), { text: 'berus', words: [{ word: 'berus', start: 0.16, end: 2.15 }] })
  t.strictSame(parseTranscription('{"text":" internationally\\n"}'), { text: 'internationally' })
  const token = (word: string, start: number, end: number) => ({ word, start, end, t_dtw: -1, probability: 0.5 })
  t.strictSame(
    parseTranscription(
      JSON.stringify({
        text: ' One sourdough,\n please.\n',
        segments: [
          {
            id: 0,
            text: ' One sourdough,',
            words: [token('One', 0, 0.2), token(' sour', 0.2, 0.4), token('dough', 0.4, 0.6), token(',', 0.6, 0.6)],
          },
          { id: 1, text: ' please.', words: [token(' please', 1, 1.3), token('.', 1.3, 1.3)] },
        ],
      }),
    ),
    {
      text: 'One sourdough, please.',
      words: [
        { word: 'One', start: 0, end: 0.2 },
        { word: 'sourdough,', start: 0.2, end: 0.6 },
        { word: 'please.', start: 1, end: 1.3 },
      ],
    },
  )
  // faster-whisper's segment words each start with a space: nothing to join.
  t.strictSame(parseTranscription(JSON.stringify({ text: 'a b', segments: [{ words: [token(' a', 0, 1), token(' b', 1, 2)] }] })).words, [
    { word: 'a', start: 0, end: 1 },
    { word: 'b', start: 1, end: 2 },
  ])
})

t.test('streamed events and the error body', async (t) => {
  t.strictSame(parseTranscriptionEvent('{"type":"transcript.text.delta","delta":"we "}'), { type: 'delta', delta: 'we ' })
  t.strictSame(parseTranscriptionEvent('{"type":"transcript.text.done","text":" we open "}'), { type: 'done', text: 'we open' })
  t.strictSame(parseTranscriptionEvent('{"type":"transcript.text.segment"}'), { type: 'other' })
  t.equal(
    openAiErrorMessage(
      '{"error":{"message":"Maximum content size limit exceeded","type":"invalid_request_error","param":null,"code":null}}',
    ),
    'Maximum content size limit exceeded',
  )
  t.equal(openAiErrorMessage('{"error":"Invalid JSON","code":"invalid_json"}'), 'Invalid JSON')
  t.equal(openAiErrorMessage('Bad gateway'), undefined)
})
