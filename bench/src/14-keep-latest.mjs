// Scenario 14: keepLatest, one running and one waiting per key (see keep-latest-scenario.mjs).
import { keepLatestScenario } from './keep-latest-scenario.mjs'

export default keepLatestScenario(1)
