# Очередь в реальном времени.

queue-title = Очередь
queue-intro = Запросы, ожидающие свободного места на сервере, в том порядке, в котором они его получат.
queue-empty = Ожидающих запросов нет.
queue-priority-off = Приоритизация запросов выключена: все запросы ждут в одном классе в порядке поступления.
queue-depth = Ожидают по классам
queue-waiters = Ожидающие запросы
queue-class = Класс
queue-model = Модель
queue-user = Пользователь
queue-token = Токен
queue-token-session = Браузер (песочница)
queue-age = Ждёт
queue-estimate = Оценка ожидания
queue-estimate-intro = Оценка ожидания учитывает запросы впереди и темп, в котором его серверы недавно принимали запросы; пока они не приняли несколько, она неизвестна.
queue-estimate-unknown = неизвестно
queue-estimate-under-second = меньше 1 с
queue-estimate-seconds = около { $seconds } с
queue-estimate-minutes = около { $minutes } мин
queue-estimate-hours = около { $hours } ч
queue-backends = Серверы
queue-backends-empty = Ни один сервер не работает.
queue-backend = Сервер
queue-health = Состояние

queue-recent = Последние назначения
queue-recent-intro = Последние 20 запросов, получивших место на сервере; сначала самые новые.
queue-recent-empty = С момента запуска шлюза ни один запрос ещё не был назначен.
queue-recent-time = Время
queue-recent-waited = Ожидание в очереди
queue-recent-ago = { $duration } назад

live-connecting = Подключение…
live-connected = В реальном времени
live-polling = Обновление каждые 2 секунды
live-offline = Данные в реальном времени недоступны
live-stopped = Остановлено
live-not-admin = Вы больше не администратор, поэтому очередь в реальном времени остановлена. Перезагрузите страницу, когда ваши права будут восстановлены.
live-signed-out = Вы вышли из системы, поэтому очередь в реальном времени остановлена. Войдите снова, чтобы следить за ней.
