import type { Operation } from './operation.js'
import { V1 } from './operation.js'
import { createSipTrunkSchema, updateSipTrunkSchema } from '../routes/sip-trunks.js'

/** The SIP trunk routes. */
export const SIP_OPERATIONS: Operation[] = [
  {
    method: 'post',
    path: '/v1/sip/trunks',
    tag: 'sip',
    summary: 'Create a SIP trunk: inbound by source address and/or digest credentials, outbound through a SIP URI',
    auth: 'api_key',
    body: createSipTrunkSchema,
    ok: { status: 201, description: 'the trunk, passwords only as `has_password`', schemaRef: 'SipTrunk' },
    errors: [400, 409, 429, 503],
  },
  {
    method: 'get',
    path: '/v1/sip/trunks',
    tag: 'sip',
    summary: "The organization's SIP trunks, oldest first",
    auth: 'api_key',
    ok: { status: 200, description: '`{ trunks }`', schemaRef: 'SipTrunkList' },
    errors: [400],
  },
  {
    method: 'get',
    path: '/v1/sip/trunks/:trunk_id',
    tag: 'sip',
    summary: 'One SIP trunk',
    auth: 'api_key',
    ok: { status: 200, description: 'the trunk', schemaRef: 'SipTrunk' },
    errors: V1,
  },
  {
    method: 'patch',
    path: '/v1/sip/trunks/:trunk_id',
    tag: 'sip',
    summary: 'Update a SIP trunk: given fields replace, omitted ones (a password too) stay, null clears',
    auth: 'api_key',
    body: updateSipTrunkSchema,
    ok: { status: 200, description: 'the trunk', schemaRef: 'SipTrunk' },
    errors: [400, 404, 503],
  },
  {
    method: 'delete',
    path: '/v1/sip/trunks/:trunk_id',
    tag: 'sip',
    summary: 'Delete a SIP trunk; calls already connected through it go on',
    auth: 'api_key',
    ok: { status: 200, description: 'the deleted trunk', schemaRef: 'SipTrunk' },
    errors: V1,
  },
]
