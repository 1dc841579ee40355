// Scenario 15: keepLatest with two running and one waiting per key (see keep-latest-scenario.mjs).
import { keepLatestScenario } from './keep-latest-scenario.mjs'

export default keepLatestScenario(2)
