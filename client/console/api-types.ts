// Generated from the gateway's OpenAPI document (api/openapi) by `npm run console-types`: do not edit.
// client/console/types.ts names the shapes the console reads; test/openapi/console-types.test.ts keeps this file current.

export type paths = Record<string, never>
export type webhooks = Record<string, never>
export interface components {
  schemas: {
    Error: {
      /** @description safe message */
      error: string
      /** @description stable code from the error registry */
      code?: string
      /** @description every validation problem, each naming its field */
      details?: string[]
    }
    /** @description Ordered stages from the end of the user's speech; the duration_ms add up to the turn's latency_ms */
    LatencyBreakdown: {
      stages: {
        /** @enum {string} */
        name:
          | 'user_speech_end'
          | 'transcript_final'
          | 'webhook_sent'
          | 'reply_first_byte'
          | 'reply_first_text'
          | 'tts_request'
          | 'tts_first_audio'
          | 'first_frame_out'
          | 'first_audio_heard'
        /** @description ms after the end of the user's speech */
        at_ms: number
        /** @description ms after the stage before */
        duration_ms: number
      }[]
    } | null
    /** @description Why the turn failed and what the caller heard instead of the agent's reply; null for a good turn */
    TurnFailure: {
      /** @description http_<status> (http_500), timeout, connect_refused, connect_failed, invalid_stream, stream_broken, empty_reply, backend_error (the backend sent response.error), tts_failed, stt_failed (the speech recognizer lost the caller's words) */
      cause: string
      /** @description ms from the end of the caller's turn to the first audio the caller heard in the turn */
      waited_ms: number
      /** @description the fallback text spoken instead, or null */
      heard: string | null
      /** @description one short line on what went wrong (at most 200 characters) */
      detail: string | null
    } | null
    SessionDetails: {
      session_id: string
      agent_id: string
      conversation_id: string
      /** @enum {string} */
      status: 'authorized' | 'connected' | 'ended'
      started_at: string | null
      ended_at: string | null
      duration_ms: number | null
      metadata: Record<string, never>
      from_phone_number: string | null
      from_phone_country: string | null
      to_phone_number: string | null
      to_phone_country: string | null
      ip_address: string | null
      country_code: string | null
      transcription_duration_seconds: number | null
      tts_duration_seconds: number | null
      /** @description mean turn latency */
      latency_ms: number | null
      transcript: {
        timestamp: string
        user_message: string | null
        assistant_message: string | null
        latency_ms: number | null
        latency_breakdown: components['schemas']['LatencyBreakdown']
        failure: components['schemas']['TurnFailure']
        /** @description Why the caller turn ended when it did (an addition): complete_answer, complete_number, base_timeout, vendor_end_of_turn, typed, or extended: <why> (incomplete_number, awaiting_number, open_number, trailing_conjunction, filler, open_list, spelling, incomplete_date) */
        turn_end: string | null
      }[]
      /** @enum {string} */
      recording_status: 'not_available' | 'in_progress' | 'completed'
      recording_url?: string
      end_reason: string | null
      call_status: string | null
      transferred_to: string | null
      /** @description Warm transfers of the session (an addition), one per attempt: times in ms since it started. */
      transfers: {
        /** @enum {string} */
        mode: 'warm'
        to: string
        /** Format: date-time */
        started_at: string
        answered_after_ms?: number
        connected_after_ms?: number
        failed_after_ms?: number
        failed_reason?: string
        failed_in?: string
        /** @description What each party said while bridged, when the transfer asked to transcribe (redacted). */
        transcript?: {
          /** @enum {string} */
          speaker: 'caller' | 'human'
          text: string
          at_ms: number
        }[]
      }[]
      answered_by: string | null
    }
    SessionList: {
      sessions: {
        session_id: string
        agent_id: string
        agent_name: string
        conversation_id: string
        /** @enum {string} */
        channel: 'browser' | 'carrier' | 'sip'
        direction?: string | null
        /** @enum {string} */
        status: 'connected' | 'ended'
        from_phone_number?: string | null
        to_phone_number?: string | null
        started_at?: string | null
        ended_at?: string | null
        duration_ms?: number | null
        /** @description transcript entries stored so far */
        turns: number
        /** @description turns with a failure (see TurnFailure) */
        failed_turns: number
        /** @description mean turn latency */
        latency_ms?: number | null
        /** @enum {string|null} */
        end_reason?:
          | 'client_disconnected'
          | 'hangup'
          | 'caller_hangup'
          | 'duration_timeout'
          | 'silence_timeout'
          | 'shutdown'
          | 'error'
          | 'media_timeout'
          | 'transferred'
          | 'transfer_caller_hangup'
          | 'transfer_human_hangup'
          | 'lease_expired'
          | 'superseded'
          | 'stream_not_connected'
          | 'call_status_timeout'
          | 'carrier_error'
          | 'dial_queue_full'
          | 'call_completed'
          | 'call_busy'
          | 'call_no_answer'
          | 'call_canceled'
          | 'call_failed'
          | null
        recording_status: string
      }[]
      /** @description opaque: pass it as `cursor`, with the same filters, for the next page; null on the last page */
      next_cursor: string | null
    }
    PhoneAssignment: {
      /** @description E.164 */
      phone_number: string
      carrier_sid: string | null
      friendly_name: string | null
      assigned_at: string
    }
    PipelineConfig: {
      /** @constant */
      type?: 'voice'
      clients: {
        /** @default true */
        browser: unknown
        /** @default false */
        carrier: unknown
      }
      plugins: (
        | {
            /** @constant */
            use: 'stt.vendor_a'
            options:
              | {
                  /** @constant */
                  model_id: 'nova-3'
                  /**
                   * @default multi
                   * @enum {string}
                   */
                  language:
                    | 'multi'
                    | 'bg'
                    | 'ca'
                    | 'cs'
                    | 'da'
                    | 'da-DK'
                    | 'nl'
                    | 'en'
                    | 'en-US'
                    | 'en-AU'
                    | 'en-GB'
                    | 'en-IN'
                    | 'en-NZ'
                    | 'et'
                    | 'fi'
                    | 'nl-BE'
                    | 'fr'
                    | 'fr-CA'
                    | 'de'
                    | 'de-CH'
                    | 'el'
                    | 'hi'
                    | 'hu'
                    | 'id'
                    | 'it'
                    | 'ja'
                    | 'ko'
                    | 'ko-KR'
                    | 'lv'
                    | 'lt'
                    | 'ms'
                    | 'no'
                    | 'pl'
                    | 'pt'
                    | 'pt-BR'
                    | 'pt-PT'
                    | 'ro'
                    | 'ru'
                    | 'sk'
                    | 'es'
                    | 'es-419'
                    | 'sv'
                    | 'sv-SE'
                    | 'tr'
                    | 'uk'
                    | 'vi'
                  keyterms?: string[]
                  /** @default 300 */
                  endpointing_ms: number
                  /** @default 1000 */
                  utterance_end_ms: number
                }
              | {
                  /** @constant */
                  model_id: 'flux'
                  /**
                   * @default en
                   * @constant
                   */
                  language: 'en'
                  keyterms?: string[]
                }
          }
        | {
            /** @constant */
            use: 'stt.vendor_b'
            options: {
              /**
               * @default universal-streaming-english
               * @enum {string}
               */
              speech_model: 'universal-streaming-english' | 'universal-streaming-multilingual'
              word_boost?: string[]
              /** @default 0.4 */
              end_of_turn_confidence_threshold: number
              /** @default 400 */
              min_end_of_turn_silence_when_confident: number
              /** @default 1280 */
              max_turn_silence: number
            }
          }
        | {
            /** @constant */
            use: 'stt.openai_compatible'
            options: {
              /**
               * @default segments
               * @enum {string}
               */
              mode: 'segments' | 'realtime'
              /**
               * @default openai
               * @enum {string}
               */
              realtime_flavor: 'openai' | 'vllm'
              /** @default whisper-1 */
              model: string
              language?: string
              prompt?: string
              vocabulary?: string[]
              temperature?: number
              /** @default 16000 */
              sample_rate: 8000 | 16000
              /** @default false */
              stream: boolean
              /** @default 10000 */
              timeout_ms: number
              /** @default 30 */
              max_segment_seconds: number
            }
          }
        | {
            /** @constant */
            use: 'turn_manager'
            options: {
              /**
               * @default automatic
               * @constant
               */
              mode: 'automatic'
              /** @default 2000 */
              base_timeout_ms: number
              /** @default null */
              user_silence_timeout_minutes: number | null
              /** @default false */
              disable_interruptions_during_welcome: boolean
              /**
               * @default automatic
               * @enum {string}
               */
              trigger: 'automatic' | 'push_to_talk'
              /** @default true */
              allow_interruptions: boolean
              /** @default 400 */
              min_interruption_ms: number
              /** @default 0 */
              min_interruption_words: number
              /** @default 300 */
              min_timeout_ms: number
              /** @default 4000 */
              max_timeout_ms: number
              /**
               * @default {
               *       "en": [
               *         "uh-huh",
               *         "uh huh",
               *         "mm-hm",
               *         "mm-hmm",
               *         "mhm",
               *         "mm",
               *         "hmm",
               *         "uh",
               *         "um",
               *         "oh",
               *         "ah",
               *         "yeah",
               *         "yep",
               *         "yes",
               *         "okay",
               *         "ok",
               *         "right",
               *         "sure",
               *         "i see",
               *         "got it",
               *         "alright",
               *         "all right",
               *         "cool",
               *         "great"
               *       ]
               *     }
               */
              backchannels: {
                [key: string]: string[]
              }
              /** @default US */
              default_country: string
            }
          }
        | {
            /** @constant */
            use: 'agent.llm'
            options: {
              /**
               * @default scripted
               * @enum {string}
               */
              provider: 'openai' | 'scripted'
              /** @default gpt-4o-mini */
              model_id: string
              /** @default You are a friendly, concise voice assistant. Answer in one or two short spoken sentences, without lists, markdown or emoji, and ask a question when the request is unclear. */
              system_prompt: string
              /** @default Hello! How can I help you today? */
              welcome_message: string
              temperature?: number
              /** @default 20 */
              max_history_turns: number
            }
          }
        | {
            /** @constant */
            use: 'agent.webhook'
            options: {
              url: string
              /**
               * @default [
               *       "message",
               *       "data",
               *       "welcome"
               *     ]
               */
              events: ('message' | 'data' | 'welcome')[]
              custom_headers?: {
                [key: string]: string
              }
              /** @default 10000 */
              time_to_first_byte_ms: number
              /** @default 120000 */
              timeout_ms: number
              /** @default 2500 */
              reply_timeout_ms: number
              fallback: {
                /**
                 * @default [
                 *       "I'm sorry, I'm having trouble answering right now. Could you say that again?"
                 *     ]
                 */
                messages: string[]
                /** @default 3 */
                max_consecutive_failures: number
                /**
                 * @default continue
                 * @enum {string}
                 */
                on_max_failures: 'continue' | 'transfer' | 'hangup'
                /** @default I'm sorry, I can't help you right now. Please call again later. Goodbye. */
                farewell_message: string
                /** @default Let me transfer you to a colleague. */
                transfer_message: string
                transfer_to?: string
              }
              holding: {
                /** @default false */
                enabled: boolean
                /** @default 1500 */
                after_ms: number
                /**
                 * @default [
                 *       "One moment."
                 *     ]
                 */
                messages: string[]
              }
              /** @default false */
              debug_failures: boolean
            }
          }
        | {
            /** @constant */
            use: 'tts.vendor_a'
            options: {
              /** @default eleven_flash_v2_5 */
              model_id: string
              /** @default 21m00Tcm4TlvDq8EDWM6 */
              voice_id: string
              speed?: number
            }
          }
        | {
            /** @constant */
            use: 'tts.openai_compatible'
            options: {
              /** @default tts-1 */
              model: string
              /** @default alloy */
              voice: string
              /**
               * @default pcm
               * @enum {string}
               */
              response_format: 'pcm' | 'wav'
              speed?: number
              /** @default 24000 */
              sample_rate: 8000 | 16000 | 22050 | 24000
              /** @default 10000 */
              timeout_ms: number
            }
          }
        | {
            /** @constant */
            use: 'tts.local'
            options: {
              /** @default en-us */
              voice: unknown
              /** @default 175 */
              rate: number
            }
          }
      )[]
      metadata?: {
        [key: string]: unknown
      }
      session_webhook?: {
        url: string
        custom_headers?: {
          [key: string]: string
        }
        custom_metadata?: {
          [key: string]: unknown
        }
        /**
         * @default [
         *       "session.start",
         *       "session.end",
         *       "session.update"
         *     ]
         */
        events: (
          | 'session.start'
          | 'session.end'
          | 'session.update'
          | 'transfer.started'
          | 'transfer.answered'
          | 'transfer.connected'
          | 'transfer.failed'
        )[]
      }
      /** @default 30 */
      session_duration_timeout_minutes: number
      vad: {
        /** @default true */
        enabled: boolean
        /** @default true */
        gate_audio: boolean
        /** @default 10 */
        buffer_frames: number
        /**
         * @default v5
         * @constant
         */
        model: 'v5'
        positive_speech_threshold?: number
        negative_speech_threshold?: number
        redemption_frames?: number
        min_speech_frames?: number
        pre_speech_pad_frames?: number
        frame_samples?: number
      }
      privacy?: {
        redact: {
          /** @default true */
          cards: boolean
          /** @default true */
          ssn: boolean
          /** @default false */
          iban: boolean
          /** @default false */
          email: boolean
          /** @default false */
          phone: boolean
        }
        /** @default false */
        redact_webhooks: boolean
        /**
         * @default redacted
         * @enum {string}
         */
        transcripts: 'redacted' | 'full' | 'none'
        /** @default true */
        recordings: boolean
        retention_days?: number
      }
      voicemail_message?: string
      transfer?: {
        hold_audio_url?: string
      }
    }
    AgentSummary: {
      id: string
      name: string
      type: string
      agent_template_id: string | null
      created_at: string
      updated_at: string
      assigned_phone_numbers: components['schemas']['PhoneAssignment'][]
    }
    AgentList: {
      agents: components['schemas']['AgentSummary'][]
    }
    Agent: {
      id: string
      name: string
      type: string
      agent_template_id: string | null
      created_at: string
      updated_at: string
      assigned_phone_numbers: components['schemas']['PhoneAssignment'][]
      config: components['schemas']['PipelineConfig']
      /** @description signs the webhooks sent to the backend */
      webhook_secret: string
      demo_mode: boolean
    }
    WebhookDelivery: {
      id: string
      session_id: string
      /** @description the lifecycle webhook's `type` */
      type: string
      url: string
      /** @enum {string} */
      status: 'pending' | 'delivered' | 'failed'
      attempts: number
      response_status: number | null
      error: string | null
      created_at: string
      last_attempt_at: string | null
    }
    WebhookDeliveryList: {
      deliveries: components['schemas']['WebhookDelivery'][]
    }
    DailyStats: {
      /** @description YYYY-MM-DD (UTC) */
      date: string
      sessions: number
      /** @description connected minutes of the sessions that started that day */
      minutes: number
      /** @description turns with a measured latency */
      turns: number
      latency_p50_ms: number | null
      latency_p90_ms: number | null
      latency_p99_ms: number | null
    }
    DailyStatsList: {
      days: components['schemas']['DailyStats'][]
    }
    SipTrunk: {
      id: string
      name: string
      inbound: {
        allowed_cidrs: string[]
        username: string | null
        has_password: boolean
      } | null
      outbound: {
        uri: string
        username: string | null
        has_password: boolean
        /** @description E.164 */
        from_number: string | null
      } | null
      /**
       * @description SRTP (SDES) for the trunk's calls: only over TLS; `required` refuses plain RTP with 488
       * @enum {string}
       */
      media_encryption: 'none' | 'optional' | 'required'
      created_at: string
      updated_at: string
    }
    SipTrunkList: {
      trunks: components['schemas']['SipTrunk'][]
    }
  }
  responses: {
    /** @description the error body */
    Error: {
      headers: {
        /** @description whole seconds to wait, on a refusal that passes with time (429 `rate_limited`, 503) */
        'Retry-After'?: number
        [name: string]: unknown
      }
      content: {
        'application/json': components['schemas']['Error']
      }
    }
  }
  parameters: never
  requestBodies: never
  headers: never
  pathItems: never
}
export type $defs = Record<string, never>
export type operations = Record<string, never>
