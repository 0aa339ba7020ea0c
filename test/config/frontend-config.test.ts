import t from 'tap'
import { frontendConfig } from '../../pipeline/config/frontend-config.js'
import { baseConfig, configWithPlugin, validOf } from './fixtures/config-fixtures.js'

t.test('defaults', async (t) => {
  t.strictSame(frontendConfig(validOf(baseConfig())), {
    transcription: { trigger: 'automatic', can_interrupt: true, automatic: true },
    vad: { enabled: true, gate_audio: true, buffer_frames: 10, model: 'v5', frame_samples: 512 },
  })
})

t.test('push-to-talk without interruptions', async (t) => {
  const config = validOf(configWithPlugin('turn_manager', { trigger: 'push_to_talk', allow_interruptions: false }))
  t.strictSame(frontendConfig(config).transcription, { trigger: 'push_to_talk', can_interrupt: false, automatic: false })
})

t.test('every vad option set is passed through', async (t) => {
  const vad = {
    enabled: false,
    gate_audio: false,
    buffer_frames: 3,
    model: 'v5',
    positive_speech_threshold: 0.6,
    negative_speech_threshold: 0.4,
    redemption_frames: 8,
    min_speech_frames: 3,
    pre_speech_pad_frames: 1,
    frame_samples: 512,
  }
  t.strictSame(frontendConfig(validOf({ ...baseConfig(), vad })).vad, vad)
})

t.test('only set optional vad fields appear', async (t) => {
  const out = frontendConfig(validOf({ ...baseConfig(), vad: { redemption_frames: 0 } }))
  t.strictSame(out.vad, { enabled: true, gate_audio: true, buffer_frames: 10, model: 'v5', redemption_frames: 0, frame_samples: 512 })
})
