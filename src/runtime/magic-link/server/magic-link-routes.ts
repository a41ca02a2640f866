import { featureRoute, type RouteContract } from '../../server/lib/edge/route-contract'
import * as req from '../../server/lib/edge/request-schemas'
import * as res from '../../server/lib/edge/response-schemas'
import { magicLinkRoutePath } from '../magic-link-paths'

/** The magic-link provider's routes under `<authPath>/magic-link` (registered when the provider is on). */
export const MAGIC_LINK_ROUTES = {
  request: {
    id: 'MagicLinkRequest',
    method: 'post',
    path: e => magicLinkRoutePath(e.authPath),
    handler: 'magic-link/server/routes/request.post',
    summary: 'Ask for a login link by email',
    description: 'Always the same answer: whether the account exists is told neither by the answer nor by its timing. Sets the code cookie that recognises this browser when the link is opened.',
    sameOrigin: true,
    rateLimit: 'magicLink',
    body: req.magicLinkRequest,
    ok: { schema: res.messageResponse, description: 'The same answer for every address' },
    errors: ['invalid_email'],
  },
  redeem: {
    id: 'MagicLinkRedeem',
    ...featureRoute('magic-link', 'redeem', 'post'),
    summary: 'Open a login link',
    description: 'Posted by the link\'s page. In the browser that asked, or with `thisDevice`, spends the link and logs this browser in; elsewhere answers a short code to type into the browser that asked, and the link stays unspent.',
    sameOrigin: true,
    rateLimit: 'verify',
    body: req.magicLinkRedeemRequest,
    ok: { schema: res.magicLinkRedeemResponse, description: '`redirect`: the callback page with a code (or the second-factor page); `code`: the short code' },
    errors: ['invalid_magic_link'],
  },
  code: {
    id: 'MagicLinkCode',
    ...featureRoute('magic-link', 'code', 'post'),
    summary: 'Log in with the short code of a link opened elsewhere',
    description: 'Only in the browser that asked for the link; spends the code and the link.',
    sameOrigin: true,
    rateLimit: 'verify',
    body: req.magicLinkCodeRequest,
    ok: { schema: res.redirectResponse, description: '`redirect` is the callback page with a code (or the second-factor page)' },
    errors: ['invalid_email', 'invalid_verification_code', 'too_many_attempts', 'rate_limited'],
  },
} satisfies Record<string, RouteContract>
