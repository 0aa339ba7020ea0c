import { onlyInput, type PipelineInput } from '../../pipeline/index.js'
import type { VendorEndpoints } from './ports/pipeline-factory.js'

/** Input of a session whose pipeline is not running (ended, or failed to start): everything is dropped. */
export const NO_INPUT: PipelineInput = onlyInput({})

/** Vendor endpoints of a process configured with none: sessions run with what needs no key. */
export const NO_VENDORS: VendorEndpoints = {}
